#include "reference/interpreter.h"

#include <string>

#include "ir/op.h"
#include "ir/type_inference.h"
#include "lazuli/error.h"
#include "reference/interpreter_internal.h"

namespace lz::reference {
namespace detail {

std::vector<int64_t> contiguous_strides(const Shape& shape) {
  std::vector<int64_t> strides(shape.size());
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    strides[d] = stride;
    stride *= shape[d];
  }
  return strides;
}

std::vector<int64_t> broadcast_strides(const Shape& shape, const Shape& target) {
  const std::vector<int64_t> own = contiguous_strides(shape);
  std::vector<int64_t> strides(target.size(), 0);
  const size_t skipped = target.size() - shape.size();  // missing leading dimensions
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] != 1) strides[skipped + d] = own[d];
  }
  return strides;
}

void fail_unsupported_dtype(const ir::Node& node, DType dtype) {
  throw Error("[" + std::string(ir::op_name(node.op)) + "] is not defined for " +
              dtype_name(dtype) + " operands");
}

}  // namespace detail

namespace {

std::string describe(const ir::Node& node) {
  return std::string(dtype_name(node.dtype)) + " " + shape_string(node.shape);
}

/// The buffers must be what node.inputs promise; a mismatch would make the loops read out of
/// bounds, so it is an error rather than an assumption.
void check_inputs(const ir::Node& node, std::span<const memory::Buffer* const> inputs) {
  const std::string op = "[" + std::string(ir::op_name(node.op)) + "] ";
  if (inputs.size() != node.inputs.size()) {
    throw Error(op + "got " + std::to_string(inputs.size()) + " input buffers for " +
                std::to_string(node.inputs.size()) + " inputs");
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ir::Node& input = *node.inputs[i];
    const memory::Buffer* buffer = inputs[i];
    if (buffer == nullptr) throw Error(op + "input " + std::to_string(i) + " has no buffer");
    if (buffer->dtype() != input.dtype || buffer->size() != input.size()) {
      throw Error(op + "input " + std::to_string(i) + " is " + describe(input) +
                  " but its buffer holds " + std::to_string(buffer->size()) + " " +
                  dtype_name(buffer->dtype()) + " elements");
    }
  }
}

}  // namespace

std::shared_ptr<memory::Buffer> interpret_node(const ir::Node& node,
                                               std::span<const memory::Buffer* const> inputs) {
  if (node.op == ir::Op::Data) {
    if (node.buffer == nullptr) {
      throw Error("[data] node has no buffer: a data leaf (" + describe(node) +
                  ") must hold its values before it is interpreted");
    }
    return node.buffer;
  }
  // The loops below trust the IR's typing rules (operand dtypes, result shape); a node that
  // breaks them would make them read out of bounds, so it is rejected here.
  const ir::TensorType expected = ir::infer_type(node);
  if (expected.dtype != node.dtype || expected.shape != node.shape) {
    throw Error("[" + std::string(ir::op_name(node.op)) + "] node is typed " + describe(node) +
                " but its inputs and attributes give " + dtype_name(expected.dtype) + " " +
                shape_string(expected.shape));
  }
  check_inputs(node, inputs);
  std::shared_ptr<memory::Buffer> out = memory::Buffer::allocate(node.dtype, node.size());
  switch (ir::op_info(node.op).kind) {
    case ir::OpKind::Leaf: detail::interpret_leaf(node, *out); break;
    case ir::OpKind::Unary: detail::interpret_unary(node, *inputs[0], *out); break;
    case ir::OpKind::Binary: detail::interpret_binary(node, *inputs[0], *inputs[1], *out); break;
    case ir::OpKind::Ternary:
      detail::interpret_where(node, *inputs[0], *inputs[1], *inputs[2], *out);
      break;
    case ir::OpKind::Reduction: detail::interpret_reduction(node, *inputs[0], *out); break;
    case ir::OpKind::Movement: detail::interpret_movement(node, inputs, *out); break;
    case ir::OpKind::LinearAlgebra:
      detail::interpret_matmul(node, *inputs[0], *inputs[1], *out);
      break;
    case ir::OpKind::Collective:
      // Its value depends on the other ranks' operands, which only the communicator sees.
      throw Error("[" + std::string(ir::op_name(node.op)) +
                  "] a collective runs only through a process group's communicator "
                  "(lz::dist::init), not node by node");
  }
  return out;
}

std::vector<std::shared_ptr<memory::Buffer>> interpret(const ir::Graph& graph,
                                                       const std::vector<bool>& keep) {
  const size_t count = graph.nodes.size();
  if (keep.size() != count) {
    throw Error("[interpret] got " + std::to_string(keep.size()) + " keep flags for " +
                std::to_string(count) + " graph nodes");
  }
  const ir::NodePositions position = graph.index();

  // Where each node's inputs are in the graph (-1: outside it, then it must be evaluated), and
  // how many reads of each result are still to come. Evaluated nodes read nothing.
  std::vector<std::vector<int64_t>> input_positions(count);
  std::vector<int64_t> reads_left(count, 0);
  for (size_t i = 0; i < count; ++i) {
    const ir::Node& node = *graph.nodes[i];
    if (node.is_evaluated()) continue;
    for (const ir::NodePtr& input : node.inputs) {
      const auto found = position.find(input.get());
      const int64_t j = found == position.end() ? -1 : found->second;
      if (j >= static_cast<int64_t>(i)) {
        throw Error("[interpret] graph is not in topological order: node " + std::to_string(i) +
                    " (" + std::string(ir::op_name(node.op)) + ") reads node " + std::to_string(j));
      }
      input_positions[i].push_back(j);
      if (j >= 0) ++reads_left[j];
    }
  }

  std::vector<std::shared_ptr<memory::Buffer>> results(count);
  std::vector<const memory::Buffer*> input_buffers;
  for (size_t i = 0; i < count; ++i) {
    const ir::Node& node = *graph.nodes[i];
    if (node.is_evaluated()) {
      results[i] = node.buffer;
    } else {
      input_buffers.clear();
      for (size_t k = 0; k < node.inputs.size(); ++k) {
        const int64_t j = input_positions[i][k];
        input_buffers.push_back(j >= 0 ? results[j].get() : node.inputs[k]->buffer.get());
      }
      results[i] = interpret_node(node, input_buffers);
      for (int64_t j : input_positions[i]) {
        if (j >= 0 && --reads_left[j] == 0 && !keep[j]) results[j].reset();
      }
    }
    if (reads_left[i] == 0 && !keep[i]) results[i].reset();
  }
  return results;
}

}  // namespace lz::reference
