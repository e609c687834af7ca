// Random IR graphs over every op, dtype, broadcasting, reduction and movement, shared by the
// differential fuzzer (differential_fuzz_test.cpp) and the CUDA code generator's tests
// (tests/codegen/cuda_codegen_test.cpp).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <numeric>
#include <random>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ir/clone.h"
#include "ir/graph.h"
#include "ir/node.h"
#include "ir/type_inference.h"
#include "lazuli/error.h"

namespace lz::passes::test {

using ir::NodePtr;
using ir::Op;

/// A node of `op` over `inputs`, attributes set by `configure`, typed by infer_type (which throws
/// lz::Error for an invalid combination; the generator then tries something else).
inline NodePtr make_node(Op op, std::vector<NodePtr> inputs,
                         const std::function<void(ir::Node&)>& configure = nullptr) {
  auto node = std::make_shared<ir::Node>();
  node->op = op;
  node->inputs = std::move(inputs);
  if (configure) configure(*node);
  ir::TensorType type = ir::infer_type(*node);
  node->dtype = type.dtype;
  node->shape = std::move(type.shape);
  return node;
}

/// Random graphs over every op, dtype, broadcasting, reduction and movement, with shared
/// subexpressions, dead nodes, intermediates as outputs and the patterns the simplifier rewrites.
///
/// Floating values carry a bound on their magnitude, and operands of ops that amplify small
/// differences (exp, sin, division, log, sqrt, pow, matmul) are squashed (tanh) or moved away
/// from zero (abs(x) + 1) first. The pipeline may legitimately round differently (a folded chain
/// of scalar adds), and these guards keep such differences within the comparison's tolerance.
class GraphGenerator {
 public:
  /// `extent_offset` is added to every extent of 2 or more that the graph's leaves and broadcasts
  /// draw (1 to 5 otherwise): 15 gives extents of 17 to 20, which the CPU code generator takes
  /// at run time (plan::Sizes::Runtime).
  explicit GraphGenerator(uint64_t seed, int64_t extent_offset = 0)
      : random_(seed), extent_offset_(extent_offset) {}

  ir::Graph generate() {
    const int leaves = uniform(1, 3);
    for (int i = 0; i < leaves; ++i) leaf(random_dtype(), random_shape());
    const int ops = uniform(3, 30);
    for (int made = 0, attempts = 0; made < ops && attempts < ops * 8; ++attempts) {
      try {
        grow();
        ++made;
      } catch (const Error&) {
        // An invalid combination (shapes that do not broadcast, ...): try another.
      }
    }
    ir::Graph graph;
    graph.nodes = nodes_;  // creation order is topological; unused nodes stay, for DCE
    graph.outputs.push_back(nodes_.back());
    // Most values nothing else reads (so that most of the graph is live; the others are left to
    // DCE), and a few intermediates: values the user still holds.
    std::unordered_set<const ir::Node*> read;
    for (const NodePtr& node : nodes_) {
      for (const NodePtr& input : node->inputs) read.insert(input.get());
    }
    std::vector<NodePtr> unread;
    for (const NodePtr& node : nodes_) {
      if (!read.contains(node.get()) && node != nodes_.back()) unread.push_back(node);
    }
    for (const NodePtr& node : unread) {
      if (chance(0.7)) graph.outputs.push_back(node);
    }
    const int intermediates = uniform(0, 2);
    for (int i = 0; i < intermediates; ++i) {
      graph.outputs.push_back(nodes_[uniform(0, static_cast<int>(nodes_.size()) - 1)]);
    }
    if (chance(0.1)) graph.outputs.push_back(graph.outputs.front());  // an output asked twice
    return graph;
  }

 private:
  // ---- Randomness ----
  int uniform(int low, int high) { return std::uniform_int_distribution<int>(low, high)(random_); }
  bool chance(double probability) { return std::bernoulli_distribution(probability)(random_); }
  template <class T>
  T one_of(const std::vector<T>& choices) {
    return choices[uniform(0, static_cast<int>(choices.size()) - 1)];
  }

  DType random_dtype() {
    const int draw = uniform(0, 99);
    if (draw < 45) return float32;
    if (draw < 60) return float64;
    if (draw < 75) return int32;
    if (draw < 85) return int64;
    return bool_;
  }
  DType random_floating_dtype() { return chance(0.75) ? float32 : float64; }

  Shape random_shape(int max_rank = 3) {
    Shape shape(uniform(0, max_rank));
    for (int64_t& dim : shape) dim = chance(0.03) ? 0 : extent(uniform(1, 5));
    return shape;
  }

  /// A shape that broadcasts with `shape`: the same, a scalar, a suffix with some dims 1, or one
  /// with extra leading dims (so that the result is bigger than `shape`).
  Shape broadcast_partner_shape(const Shape& shape) {
    const int draw = uniform(0, 9);
    if (draw < 4) return shape;
    if (draw < 6) return {};
    if (draw < 9) {
      Shape partner(shape.end() - uniform(0, static_cast<int>(shape.size())), shape.end());
      for (int64_t& dim : partner) {
        if (chance(0.4)) dim = 1;
      }
      return partner;
    }
    Shape partner = shape;
    partner.insert(partner.begin(), uniform(1, 3));
    return partner;
  }

  // ---- Bookkeeping ----
  NodePtr add(NodePtr node, double bound) {
    if (!(bound <= kInfinity)) bound = kInfinity;  // NaN from inf * 0
    bound_[node.get()] = node->dtype == bool_ ? 1.0 : bound;
    nodes_.push_back(node);
    return node;
  }
  double bound(const NodePtr& node) const { return bound_.at(node.get()); }

  /// A node satisfying `accept`, preferring recent ones (deeper graphs) but sometimes any earlier
  /// one (shared subexpressions). Null when none does.
  NodePtr pick(const std::function<bool(const ir::Node&)>& accept) {
    std::vector<NodePtr> candidates;
    for (const NodePtr& node : nodes_) {
      if (accept(*node)) candidates.push_back(node);
    }
    if (candidates.empty()) return nullptr;
    const int count = static_cast<int>(candidates.size());
    const int low = chance(0.6) ? std::max(0, count - 3) : 0;
    return candidates[uniform(low, count - 1)];
  }
  NodePtr pick_any() {
    return pick([](const ir::Node&) { return true; });
  }
  NodePtr pick_dtype(const std::function<bool(DType)>& accept) {
    NodePtr node = pick([&](const ir::Node& n) { return accept(n.dtype); });
    if (node != nullptr && !chance(0.1)) return node;
    DType dtype = random_dtype();
    while (!accept(dtype)) dtype = random_dtype();
    return leaf(dtype, random_shape());
  }

  // ---- Leaves ----
  NodePtr constant(DType dtype, Shape shape, double value) {
    const NodePtr node = make_node(Op::Full, {}, [&](ir::Node& n) {
      n.dtype = dtype;
      n.shape = std::move(shape);
      n.params[0] = is_floating(dtype) ? ir::ScalarParam::of(value)
                                       : ir::ScalarParam::of_integer(static_cast<int64_t>(value));
    });
    return add(node, std::abs(value));
  }

  double random_value(DType dtype) {
    if (dtype == bool_) return uniform(0, 1);
    if (is_integer(dtype)) return uniform(-4, 4);
    return one_of<double>({0.0, 1.0, -1.0, 0.5, 2.0, -3.25, 0.1, 1.5e-3, 7.0});
  }

  NodePtr leaf(DType dtype, Shape shape) {
    const int draw = uniform(0, 99);
    if (draw < 20) return constant(dtype, std::move(shape), random_value(dtype));
    if (draw < 28 && shape.size() == 1 && dtype != bool_) {
      const double start = random_value(dtype);
      const double step = is_floating(dtype) ? 0.25 * uniform(-4, 4) : uniform(-2, 2);
      const NodePtr node = make_node(Op::Arange, {}, [&](ir::Node& n) {
        n.dtype = dtype;
        n.shape = shape;
        n.params[0] = is_floating(dtype) ? ir::ScalarParam::of(start)
                                         : ir::ScalarParam::of_integer(static_cast<int64_t>(start));
        n.params[1] = is_floating(dtype) ? ir::ScalarParam::of(step)
                                         : ir::ScalarParam::of_integer(static_cast<int64_t>(step));
      });
      return add(node, std::abs(start) + std::abs(step) * static_cast<double>(shape[0]));
    }
    if (draw < 36 && dtype != bool_) {
      const double low = uniform(-3, 0);
      const double high = low + uniform(1, 4);
      const NodePtr node = make_node(Op::RandomUniform, {}, [&](ir::Node& n) {
        n.dtype = dtype;
        n.shape = std::move(shape);
        n.seed = random_();
        n.params[0] = ir::ScalarParam::of(low);
        n.params[1] = ir::ScalarParam::of(high);
      });
      return add(node, std::max(std::abs(low), std::abs(high)));
    }
    if (draw < 44 && is_floating(dtype)) {
      const double mean = uniform(-2, 2) * 0.5;
      const double deviation = uniform(0, 4) * 0.5;
      const NodePtr node = make_node(Op::RandomNormal, {}, [&](ir::Node& n) {
        n.dtype = dtype;
        n.shape = std::move(shape);
        n.seed = random_();
        n.params[0] = ir::ScalarParam::of(mean);
        n.params[1] = ir::ScalarParam::of(deviation);
      });
      return add(node, std::abs(mean) + 9 * deviation);  // Box-Muller stays below 8.6 deviations
    }
    const NodePtr node = make_node(Op::Data, {}, [&](ir::Node& n) {
      n.dtype = dtype;
      n.shape = std::move(shape);
    });
    return add(node, is_floating(dtype) ? 2.0 : 5.0);
  }

  /// A second operand for a binary op with `a`: an earlier node of a.dtype whose shape broadcasts
  /// with a's, or a new leaf.
  NodePtr partner(const NodePtr& a) {
    if (chance(0.5)) {
      NodePtr found = pick([&](const ir::Node& n) {
        if (n.dtype != a->dtype) return false;
        try {
          ir::broadcast_shapes("fuzz", n.shape, a->shape);
          return true;
        } catch (const Error&) {
          return false;
        }
      });
      if (found != nullptr) return found;
    }
    return leaf(a->dtype, broadcast_partner_shape(a->shape));
  }

  // ---- Guards for floating values ----
  NodePtr unary(Op op, NodePtr x, double result_bound) {
    return add(make_node(op, {std::move(x)}), result_bound);
  }
  NodePtr binary(Op op, NodePtr a, NodePtr b, double result_bound) {
    return add(make_node(op, {std::move(a), std::move(b)}), result_bound);
  }

  /// x itself when its magnitude stays below `limit`, else tanh(x).
  NodePtr squash(NodePtr x, double limit) {
    if (!is_floating(x->dtype) || bound(x) <= limit) return x;
    return unary(Op::Tanh, std::move(x), 1.0);
  }
  /// abs(x) + 1: a value at least 1, so that division, log and sqrt do not amplify differences.
  NodePtr at_least_one(NodePtr x) {
    x = squash(std::move(x), kModerate);
    const double b = bound(x);
    NodePtr magnitude = unary(Op::Abs, std::move(x), b);
    return binary(Op::Add, magnitude, constant(magnitude->dtype, {}, 1.0), b + 1);
  }

  // ---- One step ----
  void grow() {
    const int draw = uniform(0, 99);
    if (draw < 25) return pattern();
    if (draw < 27) return void(leaf(random_dtype(), random_shape()));
    static const std::vector<Op> kOps = [] {
      std::vector<Op> ops;
      for (int i = 0; i < ir::kOpCount; ++i) {
        const Op op = static_cast<Op>(i);
        const ir::OpKind kind = ir::op_info(op).kind;
        if (kind != ir::OpKind::Leaf && ir::op_info(op).fuzz != ir::FuzzDomain::Excluded) {
          ops.push_back(op);
        }
      }
      return ops;
    }();
    const Op op = one_of(kOps);
    switch (ir::op_info(op).kind) {
      case ir::OpKind::Unary: return grow_unary(op);
      case ir::OpKind::Binary: return grow_binary(op);
      case ir::OpKind::Ternary: return grow_where();
      case ir::OpKind::Reduction: return grow_reduction(op);
      case ir::OpKind::Movement: return grow_movement(op);
      case ir::OpKind::LinearAlgebra: return grow_matmul();
      case ir::OpKind::Leaf:
      case ir::OpKind::Collective: return;
    }
  }

  /// An operand from the op's fuzz domain (include/lazuli/op_table.def).
  NodePtr operand_for(Op op) {
    switch (ir::op_info(op).fuzz) {
      case ir::FuzzDomain::Any: return pick_any();
      case ir::FuzzDomain::NonBool: return pick_dtype([](DType d) { return d != bool_; });
      case ir::FuzzDomain::Floating: return pick_dtype(is_floating);
      case ir::FuzzDomain::FloatingSmall: return squash(pick_dtype(is_floating), 8);
      case ir::FuzzDomain::FloatingAtLeastOne: return at_least_one(pick_dtype(is_floating));
      case ir::FuzzDomain::Structured:
      case ir::FuzzDomain::Excluded: break;
    }
    ADD_FAILURE() << ir::op_name(op) << " has no fuzz domain of single operands";
    return pick_any();
  }

  void grow_unary(Op op) {
    NodePtr x = operand_for(op);
    using ir::UnaryOp;
    switch (*ir::as_unary(op)) {  // the result's bound
      case UnaryOp::Astype: {
        x = squash(x, kModerate);
        const DType target = random_dtype();
        const double b = bound(x);
        add(make_node(op, {x}, [&](ir::Node& n) { n.dtype = target; }), b);
        return;
      }
      case UnaryOp::Neg:
      case UnaryOp::Abs:
      case UnaryOp::Relu: return void(unary(op, x, bound(x)));
      case UnaryOp::Square: x = squash(x, 100); return void(unary(op, x, bound(x) * bound(x)));
      case UnaryOp::Exp: return void(unary(op, x, std::exp(bound(x))));
      case UnaryOp::Sin:
      case UnaryOp::Cos:
      case UnaryOp::Tanh:
      case UnaryOp::Sigmoid:
      case UnaryOp::Rsqrt: return void(unary(op, x, 1.0));
      case UnaryOp::Log: return void(unary(op, x, std::log(bound(x))));
      case UnaryOp::Sqrt: return void(unary(op, x, std::sqrt(bound(x))));
    }
  }

  void grow_binary(Op op) {
    NodePtr a = operand_for(op);
    a = squash(a, kModerate);
    NodePtr b = squash(partner(a), kModerate);
    const bool guarded_denominator = op == Op::Div && chance(0.8);
    if (guarded_denominator) b = at_least_one(b);
    if (op == Op::Pow && is_floating(a->dtype)) {
      // A base >= 1 and an exponent in [-1, 1], or any base with a small whole exponent.
      if (chance(0.5)) {
        a = at_least_one(a);
        b = squash(b, 1.0);
      } else {
        b = constant(a->dtype, {}, uniform(0, 3));
      }
    } else if (op == Op::Pow) {
      b = constant(a->dtype, broadcast_partner_shape(a->shape), uniform(-1, 4));
    }
    if (chance(0.5) && op != Op::Pow && op != Op::Div) std::swap(a, b);
    const double ba = bound(a);
    const double bb = bound(b);
    double result = std::max(ba, bb);
    using ir::BinaryOp;
    switch (*ir::as_binary(op)) {  // the result's bound
      case BinaryOp::Add:
      case BinaryOp::Sub: result = ba + bb; break;
      case BinaryOp::Mul: result = ba * bb; break;
      case BinaryOp::Div: result = guarded_denominator ? ba : kInfinity; break;
      case BinaryOp::Pow: result = std::pow(std::max(ba, 1.0), std::max(bb, 1.0)); break;
      case BinaryOp::Maximum:
      case BinaryOp::Minimum: break;  // the larger operand's bound
      case BinaryOp::Equal:
      case BinaryOp::NotEqual:
      case BinaryOp::Less:
      case BinaryOp::LessEqual:
      case BinaryOp::Greater:
      case BinaryOp::GreaterEqual: break;  // a bool result, within the larger bound
    }
    binary(op, a, b, result);
  }

  void grow_where() {
    NodePtr condition = pick([](const ir::Node& n) { return n.dtype == bool_; });
    NodePtr a = squash(pick_any(), kModerate);
    if (condition == nullptr || chance(0.3)) {
      const NodePtr other = partner(a);
      condition =
          binary(one_of<Op>({Op::Less, Op::Greater, Op::Equal, Op::NotEqual}), a, other, 1.0);
    }
    const NodePtr b = squash(partner(a), kModerate);
    add(make_node(Op::Where, {condition, a, b}), std::max(bound(a), bound(b)));
  }

  std::vector<int64_t> random_axes(int ndim) {
    std::vector<int64_t> axes;
    for (int d = 0; d < ndim; ++d) {
      if (chance(0.5)) axes.push_back(d);
    }
    if (axes.empty() && ndim > 0 && chance(0.8)) axes.push_back(uniform(0, ndim - 1));
    return axes;
  }

  void grow_reduction(Op op) {
    NodePtr x = op == Op::Sum ? pick_dtype([](DType d) { return d != bool_; }) : pick_any();
    if (op == Op::Sum) x = squash(x, kModerate);
    std::vector<int64_t> axes = random_axes(x->ndim());
    const bool index_reduction = op == Op::Argmax || op == Op::Argmin;
    if (index_reduction) {
      if (x->ndim() == 0) throw Error("[fuzz] argmax and argmin need an axis");
      axes = {uniform(0, x->ndim() - 1)};
    }
    int64_t reduced = 1;
    for (int64_t axis : axes) reduced *= x->shape[axis];
    const double b =
        op == Op::Sum ? bound(x) * static_cast<double>(std::max<int64_t>(reduced, 1)) : bound(x);
    const bool keepdims = chance(0.4);
    add(make_node(op, {x},
                  [&](ir::Node& n) {
                    n.set_attributes().axes = axes;
                    n.keepdims = keepdims;
                  }),
        index_reduction ? static_cast<double>(x->size()) : b);
  }

  Shape reshape_target(const Shape& shape) {
    const int64_t size = shape_size(shape);
    if (size == 0) return {0, uniform(1, 3)};
    std::vector<int64_t> divisors;
    for (int64_t d = 1; d <= size; ++d) {
      if (size % d == 0) divisors.push_back(d);
    }
    switch (uniform(0, 4)) {
      case 0: return {size};
      case 1: return {1, size};
      case 2: {
        const int64_t d = one_of(divisors);
        return {d, size / d};
      }
      case 3: {
        const int64_t d = one_of(divisors);
        return {size / d, 1, d};
      }
      default: return size == 1 ? Shape{} : Shape{size};
    }
  }

  std::vector<int64_t> random_permutation(int ndim) {
    std::vector<int64_t> perm(ndim);
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), random_);
    return perm;
  }

  Shape broadcast_target(const Shape& shape) {
    Shape target = shape;
    for (int64_t& dim : target) {
      if (dim == 1 && chance(0.7)) dim = extent(uniform(2, 4));
    }
    const int extra = uniform(0, 2);
    for (int i = 0; i < extra; ++i) target.insert(target.begin(), uniform(1, 3));
    return target;
  }

  void random_slice(const Shape& shape, ir::Node& node) {
    ir::NodeAttributes& attributes = node.set_attributes();
    attributes.starts.clear();
    attributes.steps.clear();
    node.shape.clear();
    for (int64_t dim : shape) {
      if (dim == 0) {
        attributes.starts.push_back(0);
        attributes.steps.push_back(1);
        node.shape.push_back(0);
        continue;
      }
      const int64_t step = one_of<int64_t>({1, 1, 2, -1, -2, 3});
      const int64_t start = uniform(0, static_cast<int>(dim) - 1);
      const int64_t available = step > 0 ? (dim - 1 - start) / step + 1 : start / -step + 1;
      attributes.starts.push_back(start);
      attributes.steps.push_back(step);
      node.shape.push_back(uniform(chance(0.05) ? 0 : 1, static_cast<int>(available)));
    }
  }

  void grow_movement(Op op) {
    NodePtr x = pick_any();
    const double b = bound(x);
    switch (op) {
      case Op::Reshape: {
        const Shape target = reshape_target(x->shape);
        add(make_node(op, {x}, [&](ir::Node& n) { n.shape = target; }), b);
        return;
      }
      case Op::Transpose: {
        const std::vector<int64_t> perm = random_permutation(x->ndim());
        add(make_node(op, {x}, [&](ir::Node& n) { n.set_attributes().axes = perm; }), b);
        return;
      }
      case Op::BroadcastTo: {
        const Shape target = broadcast_target(x->shape);
        add(make_node(op, {x}, [&](ir::Node& n) { n.shape = target; }), b);
        return;
      }
      case Op::Slice:
        add(make_node(op, {x}, [&](ir::Node& n) { random_slice(x->shape, n); }), b);
        return;
      case Op::Gather: return grow_gather(x);
      default: break;
    }
    // Concatenate: inputs matching x except along the axis, earlier nodes or new leaves.
    if (x->ndim() == 0) x = add(make_node(Op::Reshape, {x}, [](ir::Node& n) { n.shape = {1}; }), b);
    const int64_t axis = uniform(0, x->ndim() - 1);
    std::vector<NodePtr> inputs = {x};
    const int more = uniform(1, 2);
    for (int i = 0; i < more; ++i) {
      NodePtr other = pick([&](const ir::Node& n) {
        if (n.dtype != x->dtype || n.ndim() != x->ndim()) return false;
        for (int d = 0; d < x->ndim(); ++d) {
          if (d != axis && n.shape[d] != x->shape[d]) return false;
        }
        return true;
      });
      if (other == nullptr || chance(0.4)) {
        Shape shape = x->shape;
        shape[axis] = uniform(1, 3);
        other = leaf(x->dtype, shape);
      }
      inputs.insert(inputs.begin() + uniform(0, static_cast<int>(inputs.size())), other);
    }
    double result = 0;
    for (const NodePtr& input : inputs) result = std::max(result, bound(input));
    add(make_node(Op::Concatenate, inputs, [&](ir::Node& n) { n.set_attributes().axes = {axis}; }),
        result);
  }

  /// x read along an axis at integer indices, earlier values or new leaves, that broadcast with x
  /// outside the axis; small indices, so that most read x and some (negative or too large) are
  /// out of range and read the fill.
  void grow_gather(NodePtr x) {
    if (x->ndim() == 0) {
      x = add(make_node(Op::Reshape, {x}, [](ir::Node& n) { n.shape = {1}; }), bound(x));
    }
    const int64_t axis = uniform(0, x->ndim() - 1);
    NodePtr indices = pick([&](const ir::Node& n) {
      if ((n.dtype != int32 && n.dtype != int64) || n.ndim() != x->ndim()) return false;
      for (int d = 0; d < x->ndim(); ++d) {
        const int64_t a = x->shape[d];
        const int64_t c = n.shape[d];
        if (d != axis && a != c && a != 1 && c != 1) return false;
      }
      return true;
    });
    if (indices == nullptr || chance(0.5)) {
      Shape shape = x->shape;
      for (int d = 0; d < x->ndim(); ++d) {
        if (chance(0.3)) shape[d] = 1;
      }
      shape[axis] = uniform(0, 4);
      indices = leaf(chance(0.5) ? int32 : int64, shape);
    }
    // The fill of an integer x is its lowest value.
    const double b = is_integer(x->dtype) ? kInfinity : bound(x);
    add(make_node(Op::Gather, {x, indices}, [&](ir::Node& n) { n.set_attributes().axes = {axis}; }),
        b);
  }

  void grow_matmul() {
    NodePtr a = pick([](const ir::Node& n) { return n.dtype != bool_ && n.ndim() >= 2; });
    if (a == nullptr || chance(0.3)) {
      Shape shape = random_shape(2);
      while (shape.size() < 2) shape.push_back(uniform(1, 4));
      a = leaf(chance(0.5) ? random_floating_dtype() : int32, shape);
    }
    a = squash(a, kModerate);
    const int64_t k = a->shape.back();
    Shape b_shape = {k, uniform(1, 4)};
    if (chance(0.3)) b_shape.insert(b_shape.begin(), 1);  // batch dims broadcast
    if (chance(0.2) && a->ndim() > 2) {
      b_shape.insert(b_shape.begin(), a->shape.begin(), a->shape.end() - 2);
    }
    NodePtr b = pick([&](const ir::Node& n) {
      return n.dtype == a->dtype && n.ndim() >= 2 && n.shape[n.ndim() - 2] == k;
    });
    if (b == nullptr || chance(0.5)) b = leaf(a->dtype, b_shape);
    b = squash(b, kModerate);
    if (chance(0.3)) std::swap(a, b);  // often invalid: then the generator retries
    const NodePtr product = add(make_node(Op::MatMul, {a, b}),
                                bound(a) * bound(b) * static_cast<double>(std::max<int64_t>(k, 1)));
    // A layer: bias and activation, the epilogue that runs on the product's rows
    // (passes/matmul_epilogues.h).
    if (!is_floating(product->dtype) || chance(0.5)) return;
    const NodePtr bias = leaf(product->dtype, {product->shape.back()});
    const double biased_bound = bound(product) + bound(bias);
    const NodePtr biased = binary(Op::Add, product, bias, biased_bound);
    const Op activation = one_of<Op>({Op::Relu, Op::Tanh, Op::Sigmoid, Op::Abs, Op::Neg});
    unary(activation, biased,
          activation == Op::Tanh || activation == Op::Sigmoid ? 1.0 : biased_bound);
  }

  /// The shapes the simplifier and CSE rewrite, over earlier values.
  void pattern() {
    NodePtr x = pick_dtype([](DType d) { return d != bool_; });
    x = squash(x, kModerate);
    const double b = bound(x);
    const DType dtype = x->dtype;
    switch (uniform(0, 14)) {
      case 0: binary(Op::Mul, x, constant(dtype, {}, 1), b); return;
      case 1: binary(Op::Add, constant(dtype, broadcast_partner_shape(x->shape), 0), x, b); return;
      case 2: binary(Op::Sub, x, x, 2 * b); return;
      case 3: unary(Op::Neg, unary(Op::Neg, x, b), b); return;
      case 4: {  // a chain of scalar adds or muls
        const Op op = chance(0.5) ? Op::Add : Op::Mul;
        NodePtr chain = x;
        double chain_bound = b;
        for (int i = uniform(2, 4); i > 0; --i) {
          const double c = op == Op::Add ? random_value(dtype) : one_of<double>({2, -1, 0.5, 3});
          chain_bound = op == Op::Add ? chain_bound + std::abs(c) : chain_bound * std::abs(c);
          chain = binary(op, chain, constant(dtype, {}, c), chain_bound);
        }
        return;
      }
      case 5: {
        const Shape first = reshape_target(x->shape);
        NodePtr once = add(make_node(Op::Reshape, {x}, [&](ir::Node& n) { n.shape = first; }), b);
        const Shape second = reshape_target(once->shape);
        add(make_node(Op::Reshape, {once}, [&](ir::Node& n) { n.shape = second; }), b);
        return;
      }
      case 6: {
        const std::vector<int64_t> first = random_permutation(x->ndim());
        const std::vector<int64_t> second = random_permutation(x->ndim());
        NodePtr once = add(
            make_node(Op::Transpose, {x}, [&](ir::Node& n) { n.set_attributes().axes = first; }),
            b);
        add(make_node(Op::Transpose, {once},
                      [&](ir::Node& n) { n.set_attributes().axes = second; }),
            b);
        return;
      }
      case 7: {
        const double value = random_value(dtype);
        const NodePtr scalar = constant(dtype, {}, value);
        const Shape target = broadcast_target(random_shape());
        add(make_node(Op::BroadcastTo, {scalar}, [&](ir::Node& n) { n.shape = target; }),
            std::abs(value));
        return;
      }
      case 8: {  // constants only: folded
        const NodePtr c = constant(dtype, random_shape(2), random_value(dtype));
        binary(one_of<Op>({Op::Add, Op::Mul, Op::Maximum}), c, constant(dtype, {}, 2),
               2 * bound(c) + 2);
        return;
      }
      case 9: {  // a duplicate of an earlier node: CSE merges them
        const NodePtr original = pick([](const ir::Node& n) { return n.op != Op::Data; });
        if (original == nullptr) return;
        NodePtr copy = ir::copy_without_inputs(*original);
        copy->inputs = original->inputs;
        add(copy, bound(original));
        return;
      }
      case 10: binary(Op::Mul, x, constant(dtype, {}, 0), b); return;
      case 11: add(make_node(Op::Astype, {x}, [&](ir::Node& n) { n.dtype = dtype; }), b); return;
      case 12: {
        const NodePtr condition = binary(Op::Greater, x, constant(dtype, {}, 0), 1);
        add(make_node(Op::Where, {condition, x, x}), b);
        return;
      }
      case 13: {  // a slice that keeps everything
        add(make_node(Op::Slice, {x},
                      [&](ir::Node& n) {
                        n.set_attributes().starts.assign(x->ndim(), 0);
                        n.set_attributes().steps.assign(x->ndim(), 1);
                        n.shape = x->shape;
                      }),
            b);
        return;
      }
      default: {  // same value with another full of the same value (CSE of constants)
        const double value = random_value(dtype);
        binary(Op::Add, constant(dtype, {}, value), constant(dtype, {}, value),
               2 * std::abs(value));
        return;
      }
    }
  }

  static constexpr double kInfinity = std::numeric_limits<double>::infinity();
  static constexpr double kModerate = 1e3;

  /// A drawn extent, moved by extent_offset_ unless it is 0 or 1 (which code treats apart).
  int64_t extent(int64_t drawn) const { return drawn >= 2 ? drawn + extent_offset_ : drawn; }

  std::mt19937_64 random_;
  int64_t extent_offset_ = 0;
  std::vector<NodePtr> nodes_;
  std::unordered_map<const ir::Node*, double> bound_;
};

}  // namespace lz::passes::test
