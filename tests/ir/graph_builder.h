// Hand-built IR nodes for the tests of ir/: no frontend involved.
#pragma once

#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "ir/node.h"
#include "ir/type_inference.h"

namespace lz::ir::test {

/// A node of `op` over `inputs`. `configure` sets attributes, and the type where the op takes it
/// from the node (leaves, astype, reshape, broadcast_to, slice); the dtype and shape are then
/// set from infer_type, which throws on an invalid node.
inline NodePtr make_node(Op op, std::vector<NodePtr> inputs = {},
                         const std::function<void(Node&)>& configure = nullptr) {
  auto node = std::make_shared<Node>();
  node->op = op;
  node->inputs = std::move(inputs);
  if (configure) configure(*node);
  TensorType type = infer_type(*node);
  node->dtype = type.dtype;
  node->shape = std::move(type.shape);
  return node;
}

inline NodePtr leaf(Op op, DType dtype, Shape shape,
                    const std::function<void(Node&)>& configure = nullptr) {
  return make_node(op, {}, [&](Node& node) {
    node.dtype = dtype;
    node.shape = std::move(shape);
    if (configure) configure(node);
  });
}

inline NodePtr data(DType dtype, Shape shape) { return leaf(Op::Data, dtype, std::move(shape)); }

inline NodePtr full(DType dtype, Shape shape, ScalarParam value) {
  return leaf(Op::Full, dtype, std::move(shape), [&](Node& node) { node.params[0] = value; });
}

inline NodePtr reduce(Op op, NodePtr input, std::vector<int64_t> axes, bool keepdims) {
  return make_node(op, {std::move(input)}, [&](Node& node) {
    node.set_attributes().axes = std::move(axes);
    node.keepdims = keepdims;
  });
}

inline NodePtr slice(NodePtr input, std::vector<int64_t> starts, std::vector<int64_t> steps,
                     Shape extents) {
  return make_node(Op::Slice, {std::move(input)}, [&](Node& node) {
    node.set_attributes().starts = std::move(starts);
    node.set_attributes().steps = std::move(steps);
    node.shape = std::move(extents);
  });
}

/// Collective `op` of `x`, as recorded for `attributes`.
inline NodePtr collective(Op op, NodePtr x, CollectiveAttributes attributes) {
  return make_node(op, {std::move(x)},
                   [&](Node& node) { node.set_attributes().collective = attributes; });
}

/// The graph behind `outputs`, as the frontend would collect it.
inline Graph graph_of(std::vector<NodePtr> outputs) { return Graph::collect(outputs); }

/// A small valid node computing `op`, its attributes and scalars set to values other than the
/// defaults. Null for an op added to ir/op.h after this function: tests looping over every op
/// then fail until a sample (and printing, parsing, hashing support) is written for it.
inline NodePtr sample_node(Op op) {
  switch (op) {
    case Op::Data: return data(float32, {3, 4});
    case Op::Full: return full(float64, {2}, ScalarParam::of(0.1));
    case Op::Arange:
      return leaf(op, int64, {5}, [](Node& node) {
        node.params[0] = ScalarParam::of_integer(-3);
        node.params[1] = ScalarParam::of_integer(2);
      });
    case Op::RandomUniform:
      return leaf(op, float32, {2, 2}, [](Node& node) {
        node.seed = 7;
        node.params[0] = ScalarParam::of(-1);
        node.params[1] = ScalarParam::of(0.25);
      });
    case Op::RandomNormal:
      return leaf(op, float64, {4}, [](Node& node) {
        node.seed = 18446744073709551615ULL;
        node.params[0] = ScalarParam::of(0.1);
        node.params[1] = ScalarParam::of(3);
      });
    case Op::Neg:
    case Op::Exp:
    case Op::Log:
    case Op::Sqrt:
    case Op::Rsqrt:
    case Op::Sin:
    case Op::Cos:
    case Op::Tanh:
    case Op::Sigmoid:
    case Op::Relu:
    case Op::Abs:
    case Op::Square: return make_node(op, {data(float32, {2, 3})});
    case Op::Astype:
      return make_node(op, {data(float32, {2, 3})}, [](Node& node) { node.dtype = int32; });
    case Op::Add:
    case Op::Sub:
    case Op::Mul:
    case Op::Div:
    case Op::Pow:
    case Op::Maximum:
    case Op::Minimum:
    case Op::Equal:
    case Op::NotEqual:
    case Op::Less:
    case Op::LessEqual:
    case Op::Greater:
    case Op::GreaterEqual: return make_node(op, {data(float32, {3, 1}), data(float32, {4})});
    case Op::Where:
      return make_node(op, {data(bool_, {3, 1}), data(float32, {4}), data(float32, {3, 4})});
    case Op::Sum: return reduce(op, data(float32, {2, 3, 4}), {0, 2}, true);
    case Op::Max: return reduce(op, data(float64, {2, 3, 4}), {1}, false);
    case Op::Min: return reduce(op, data(int64, {2, 3}), {0, 1}, false);
    case Op::Argmax: return reduce(op, data(int32, {2, 3, 4}), {2}, true);
    case Op::Argmin: return reduce(op, data(float32, {2, 3, 4}), {0}, false);
    case Op::Reshape:
      return make_node(op, {data(float32, {2, 6})}, [](Node& node) { node.shape = {3, 4}; });
    case Op::Transpose:
      return make_node(op, {data(float32, {2, 3, 4})}, [](Node& node) {
        node.set_attributes().axes = {2, 0, 1};
      });
    case Op::BroadcastTo:
      return make_node(op, {data(float32, {3, 1})}, [](Node& node) { node.shape = {2, 3, 4}; });
    case Op::Slice: return slice(data(float32, {5, 6}), {4, 0}, {-2, 3}, {3, 2});
    case Op::Concatenate:
      return make_node(op, {data(float32, {2, 3}), data(float32, {2, 1}), data(float32, {2, 2})},
                       [](Node& node) { node.set_attributes().axes = {1}; });
    case Op::Gather:
      return make_node(op, {data(float32, {4, 1}), data(int32, {2, 3})},
                       [](Node& node) { node.set_attributes().axes = {0}; });
    case Op::MatMul: return make_node(op, {data(float32, {5, 2, 3}), data(float32, {3, 4})});
    case Op::AllSum: return collective(op, data(float32, {2, 3}), {.ranks = 3, .sequence = 5});
    case Op::AllMax: return collective(op, data(int32, {4}), {.ranks = 2, .sequence = 6});
    case Op::AllMin: return collective(op, data(bool_, {2}), {.ranks = 2, .sequence = 7});
    case Op::AllGather: return collective(op, data(float64, {2, 2}), {.ranks = 3, .sequence = 8});
    case Op::ReduceScatter: return collective(op, data(float32, {6}), {.ranks = 3, .sequence = 9});
    case Op::Broadcast:
      return collective(op, data(int64, {3}), {.ranks = 4, .root = 1, .sequence = 10});
  }
  return nullptr;
}

/// One graph holding sample_node of every op, each an output; ops without a sample are skipped.
inline Graph all_ops_graph() {
  std::vector<NodePtr> outputs;
  for (int i = 0; i < kOpCount; ++i) {
    if (NodePtr node = sample_node(static_cast<Op>(i))) outputs.push_back(std::move(node));
  }
  return graph_of(std::move(outputs));
}

}  // namespace lz::ir::test
