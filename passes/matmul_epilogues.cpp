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

/// Whether `kernel` computes from `product` element for element: every node depending on it is
/// an elementwise op of its shape (numpy broadcasting reads a same-shaped operand at the node's
/// own position), and every output has its shape, so the kernel's one loop writes element i of
/// each output from element i of the product. Nodes that do not read the product (a bias
/// broadcast over the rows) may be anything but a reduction, which would add loops.
bool computes_elementwise_from(const plan::Kernel& kernel, const ir::Node& product) {
  std::unordered_set<const ir::Node*> from_product{&product};
  for (const ir::NodePtr& node : kernel.nodes) {
    if (ir::op_info(node->op).kind == ir::OpKind::Reduction) return false;
    bool reads_product = false;
    for (const ir::NodePtr& input : node->inputs)
      reads_product |= from_product.contains(input.get());
    if (!reads_product) continue;
    if (!is_elementwise(node->op) || node->shape != product.shape) return false;
    from_product.insert(node.get());
  }
  for (const ir::NodePtr& output : kernel.outputs) {
    if (output->shape != product.shape) return false;
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
    // The dtypes BLAS multiplies (runtime/blas_matmul.h).
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
      if (reads_product && inputs_ready && computes_elementwise_from(candidate, product)) {
        matmul.epilogue = static_cast<int>(e);
        break;
      }
    }
  }
}

}  // namespace lz::passes
