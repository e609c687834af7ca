#include "passes/matmul_epilogues.h"

#include <unordered_map>
#include <unordered_set>

#include "ir/op.h"

namespace lz::passes {
namespace {

bool is_elementwise(ir::Op op) {
  const ir::OpKind kind = ir::op_info(op).kind;
  return kind == ir::OpKind::Unary || kind == ir::OpKind::Binary || kind == ir::OpKind::Ternary;
}

/// The shapes a node may have in an epilogue of `product`: the product's, or one value per row
/// (its shape without the last axis, or with that axis of size 1).
struct RowShapes {
  explicit RowShapes(const Shape& product)
      : elements(product), row(product.begin(), product.end() - 1), kept_row(row) {
    kept_row.push_back(1);
  }
  bool per_row(const Shape& shape) const { return shape == row || shape == kept_row; }
  bool either(const Shape& shape) const { return shape == elements || per_row(shape); }

  Shape elements, row, kept_row;
};

/// Whether `kernel` computes from `product` row by row: every output has the product's shape or
/// one value per row, and every node depending on the product is
/// - an elementwise op of one of those shapes (numpy broadcasting reads a same-shaped operand at
///   the node's own position, and a value per row across its row),
/// - a reduction over the last axis of a product-shaped value (a softmax's max and sum), or
/// - a reshape between the two per-row shapes, or a broadcast of a value per row across it.
/// So rows of the outputs need the same rows of the product only. Nodes that do not read the
/// product (a bias broadcast over the rows) may be anything but a reduction, which would add
/// loops of another kind.
bool computes_by_rows_from(const plan::Kernel& kernel, const ir::Node& product) {
  const RowShapes shapes(product.shape);
  const int last_axis = static_cast<int>(product.shape.size()) - 1;
  std::unordered_set<const ir::Node*> from_product{&product};
  for (const ir::NodePtr& node : kernel.nodes) {
    const bool reduction = ir::op_info(node->op).kind == ir::OpKind::Reduction;
    bool reads_product = false;
    for (const ir::NodePtr& input : node->inputs) {
      reads_product = reads_product || from_product.contains(input.get());
    }
    if (!reads_product) {
      if (reduction) return false;
      continue;
    }
    const Shape& input = node->inputs[0]->shape;
    const bool by_rows =
        (is_elementwise(node->op) && shapes.either(node->shape)) ||
        (reduction && input == shapes.elements &&
         node->axes() == std::vector<int64_t>{last_axis}) ||
        (node->op == ir::Op::Reshape && shapes.per_row(input) && shapes.per_row(node->shape)) ||
        (node->op == ir::Op::BroadcastTo && input == shapes.kept_row &&
         node->shape == shapes.elements);
    if (!by_rows) return false;
    from_product.insert(node.get());
  }
  for (const ir::NodePtr& output : kernel.outputs) {
    if (!shapes.either(output->shape)) return false;
  }
  return true;
}

}  // namespace

void attach_matmul_epilogues(plan::FusionPlan& plan) {
  std::unordered_map<const ir::Node*, size_t> computed_by;
  for (size_t k = 0; k < plan.kernels.size(); ++k) {
    for (const ir::NodePtr& output : plan.kernels[k].outputs) computed_by[output.get()] = k;
  }
  // A value no kernel computes is a leaf with a buffer: ready before any kernel runs.
  const auto ready_before = [&](const ir::Node* value, size_t kernel) {
    const auto found = computed_by.find(value);
    return found == computed_by.end() || found->second < kernel;
  };
  for (size_t m = 0; m < plan.kernels.size(); ++m) {
    plan::Kernel& matmul = plan.kernels[m];
    if (!plan::is_matmul_kernel(matmul)) continue;
    const ir::Node& product = *matmul.nodes.back();
    // The dtypes BLAS multiplies (runtime/cpu/blas_matmul.h).
    if (product.dtype != float32 && product.dtype != float64) continue;
    for (size_t e = m + 1; e < plan.kernels.size(); ++e) {
      const plan::Kernel& candidate = plan.kernels[e];
      bool reads_product = false;
      bool inputs_ready = true;
      for (const ir::NodePtr& input : candidate.inputs) {
        if (input.get() == &product) {
          reads_product = true;
        } else {
          inputs_ready = inputs_ready && ready_before(input.get(), m);
        }
      }
      // A kernel reading two products is ready only for the later matmul: one epilogue each.
      if (reads_product && inputs_ready && computes_by_rows_from(candidate, product)) {
        matmul.epilogue = static_cast<int>(e);
        break;
      }
    }
  }
}

}  // namespace lz::passes
