// "simplify": constant folding and algebraic simplification.
//
// Every rule below gives a node that computes, bit for bit, what the reference interpreter
// computes for the original (floats: IEEE-754 round to nearest even, float32 math rounded once
// from double; integers: two's complement wrapping). A rule that is only "mathematically" true
// is not here. Each rule, and why it is safe:
//
//  Constants
//  - Elementwise op (unary, binary, where, astype) whose inputs are all `full` -> one `full`
//    with the value the interpreter computes on 0-d copies of the inputs (elementwise ops compute
//    each element from the same-index elements alone). astype(full) is one case of it: the new
//    fill value is the converted element itself, so it is exact by construction.
//  - reshape/transpose/broadcast_to/slice of a `full` -> a `full` of the result shape: moving
//    identical elements around leaves identical elements.
//
//  Identities (x is the other operand; the result type must equal x's type, shape and dtype, or
//  else, the elements being x's own, the node becomes broadcast_to(x) of its shape)
//  - x*1, 1*x -> x: exact for every float (NaN, inf, -0 included) and integer.
//  - x/1 -> x: exact likewise.
//  - Integers: x+0, 0+x, x-0 -> x.
//  - Floats: x+(-0.0), (-0.0)+x, x-(+0.0) -> x, but NOT x+(+0.0): -0.0 + +0.0 is +0.0, so it
//    would turn -0.0 into +0.0 (visible through 1/x or signbit). This is LLVM's rule without
//    fast-math.
//  - Integers: x-x -> zeros. Not for floats: inf-inf and NaN-NaN are NaN, not 0.
//  - neg(neg(x)) -> x: negation is exact for floats and wraps back for the minimum integer.
//  - astype(x) to x's own dtype -> x: converting a value to its own type is the value.
//
//  Chains of scalar constants (a, b are 0-d `full` nodes; any operand order)
//  - Integers: (x+a)+b -> x+(a+b) and (x*a)*b -> x*(a*b): wrapping arithmetic is a ring, so
//    associativity holds even when a+b or a*b wraps.
//  - Floats: (x*a)*b -> x*(a*b) only when a and b are powers of two with |a|, |b| >= 1 and a*b is
//    finite. Scaling by such a power of two is exact unless it overflows, and then both forms
//    overflow to the same infinity. Factors below 1 are refused: x*a can round in the subnormal
//    range and the second rounding differ from rounding once; mixed factors are refused because
//    x*2^100 can overflow where x*(2^100*2^-100) does not.
//  - Floats: add chains are never folded. Even when a+b is exact, x+a rounds: in float32,
//    (1 + 2^-24) + 2^-24 is 1 (ties to even, twice) but 1 + 2^-23 is 1.0000001.
//
//  Movement
//  - reshape(reshape(x)) -> reshape(x): reshapes are row-major reinterpretations, so only the
//    last shape counts. reshape(x) to x's own shape -> x.
//  - transpose(transpose(x, p), q) -> transpose(x, r) with r[i] = p[q[i]]; an identity
//    permutation -> x.
//  - broadcast_to(broadcast_to(x)) -> broadcast_to(x): broadcasting composes. broadcast_to(x) to
//    x's own shape -> x.
//
// The walk is one forward pass in topological order: a node's inputs are already simplified
// when the node is reached, so rules see simplified operands and every rule only looks at a
// node's inputs. Rules rewrite a node in place (it keeps its identity and location) or replace
// it by an existing node (its consumers and the outputs are redirected). Rounds repeat until
// nothing changes, bounded; then unreachable nodes are removed.
#include <cmath>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "passes/constant_folding.h"
#include "passes/dead_code_elimination.h"
#include "passes/pass.h"

namespace lz::passes {
namespace {

using detail::constant_is_additive_identity;
using detail::constant_is_one;
using detail::constant_is_subtractive_identity;
using detail::constant_value;
using detail::is_constant;
using detail::is_growing_power_of_two;

// One round reaches the fixed point (rules only look at inputs, simplified before their
// consumers); further rounds are insurance, and each rewrite of one node strictly shrinks it.
constexpr int kMaxRounds = 4;
constexpr int kMaxRewritesPerNode = 16;

bool is_scalar_constant(const ir::Node& node) { return is_constant(node) && node.ndim() == 0; }

bool is_identity(const std::vector<int64_t>& permutation) {
  for (size_t i = 0; i < permutation.size(); ++i) {
    if (permutation[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

/// What a rule did to a node.
struct Rewrite {
  bool changed = false;
  ir::NodePtr replacement;  // set when the node is replaced by this (earlier) node

  static Rewrite none() { return {}; }
  static Rewrite in_place() { return {true, nullptr}; }
  static Rewrite replace_with(ir::NodePtr node) { return {true, std::move(node)}; }
};

/// Makes `node` compute `op` over `inputs`, in place, its type and location unchanged.
void become(ir::Node& node, ir::Op op, ir::NodeInputs inputs) {
  node.op = op;
  node.inputs = std::move(inputs);
  node.clear_attributes();
}

/// `x` in place of `node`, whose elements are x's: x itself when the types agree, else x
/// broadcast to the node's shape.
Rewrite forward_operand(ir::Node& node, const ir::NodePtr& x) {
  if (x->dtype != node.dtype) return Rewrite::none();
  if (x->shape == node.shape) return Rewrite::replace_with(x);
  become(node, ir::Op::BroadcastTo, {x});
  return Rewrite::in_place();
}

class Simplifier {
 public:
  explicit Simplifier(ir::Graph& graph) : graph_(graph) {}

  /// One walk over the graph; returns whether any rule fired.
  bool run_round() {
    std::vector<ir::NodePtr> old_nodes = std::move(graph_.nodes);
    graph_.nodes.clear();
    graph_.nodes.reserve(old_nodes.size());
    replacement_.clear();
    bool changed = false;
    for (ir::NodePtr& node : old_nodes) {
      for (ir::NodePtr& input : node->inputs) canonicalize(input);
      if (!node->is_evaluated() && !node->inputs.empty()) {
        for (int step = 0; step < kMaxRewritesPerNode; ++step) {
          const Rewrite rewrite = simplify(*node);
          if (!rewrite.changed) break;
          changed = true;
          if (rewrite.replacement) {
            replacement_.emplace(node.get(), rewrite.replacement);
            break;
          }
        }
      }
      // A replaced node leaves the graph: its readers come later and read the replacement. Kept,
      // the next round would replace it again, and every round would count as a change.
      if (!replacement_.contains(node.get())) graph_.nodes.push_back(std::move(node));
    }
    for (ir::NodePtr& output : graph_.outputs) canonicalize(output);
    return changed;
  }

 private:
  void canonicalize(ir::NodePtr& node) const {
    if (replacement_.empty()) return;
    const auto found = replacement_.find(node.get());
    if (found != replacement_.end()) node = found->second;
  }

  Rewrite simplify(ir::Node& node) {
    const ir::OpKind kind = ir::op_info(node.op).kind;
    const bool elementwise =
        kind == ir::OpKind::Unary || kind == ir::OpKind::Binary || kind == ir::OpKind::Ternary;
    if (elementwise) {
      if (Rewrite rewrite = fold_constants(node); rewrite.changed) return rewrite;
    }
    switch (node.op) {
      case ir::Op::Mul:
      case ir::Op::Add:
      case ir::Op::Sub:
      case ir::Op::Div:
        if (Rewrite rewrite = apply_identity(node); rewrite.changed) return rewrite;
        return fold_scalar_chain(node);
      case ir::Op::Neg: {
        const ir::Node& input = *node.inputs[0];
        if (input.op == ir::Op::Neg && !input.is_evaluated()) {
          return Rewrite::replace_with(input.inputs[0]);
        }
        return Rewrite::none();
      }
      case ir::Op::Astype:
        if (node.inputs[0]->dtype == node.dtype) return Rewrite::replace_with(node.inputs[0]);
        return Rewrite::none();
      case ir::Op::Reshape:
      case ir::Op::Transpose:
      case ir::Op::BroadcastTo:
      case ir::Op::Slice: return simplify_movement(node);
      default: return Rewrite::none();
    }
  }

  static Rewrite fold_constants(ir::Node& node) {
    for (const ir::NodePtr& input : node.inputs) {
      if (!is_constant(*input)) return Rewrite::none();
    }
    const std::optional<ir::ScalarParam> value = detail::fold_elementwise(node);
    if (!value) return Rewrite::none();
    detail::become_full(node, *value);
    return Rewrite::in_place();
  }

  static Rewrite apply_identity(ir::Node& node) {
    const ir::NodePtr& a = node.inputs[0];
    const ir::NodePtr& b = node.inputs[1];
    switch (node.op) {
      case ir::Op::Mul:
        if (is_constant(*b) && constant_is_one(*b)) return forward_operand(node, a);
        if (is_constant(*a) && constant_is_one(*a)) return forward_operand(node, b);
        break;
      case ir::Op::Div:
        if (is_constant(*b) && constant_is_one(*b)) return forward_operand(node, a);
        break;
      case ir::Op::Add:
        if (is_constant(*b) && constant_is_additive_identity(*b)) return forward_operand(node, a);
        if (is_constant(*a) && constant_is_additive_identity(*a)) return forward_operand(node, b);
        break;
      case ir::Op::Sub:
        if (is_constant(*b) && constant_is_subtractive_identity(*b)) {
          return forward_operand(node, a);
        }
        if (a == b && is_integer(node.dtype)) {
          detail::become_full(node, ir::ScalarParam::of_integer(0));
          return Rewrite::in_place();
        }
        break;
      default: break;
    }
    return Rewrite::none();
  }

  /// (x op a) op b -> x op (a op b), for op add or mul and 0-d constants a, b.
  Rewrite fold_scalar_chain(ir::Node& node) {
    if (node.op != ir::Op::Add && node.op != ir::Op::Mul) return Rewrite::none();
    const bool floating = is_floating(node.dtype);
    if (floating && node.op == ir::Op::Add) return Rewrite::none();  // see the top of the file
    for (int outer = 0; outer < 2; ++outer) {
      const ir::NodePtr& b = node.inputs[outer];
      const ir::NodePtr& inner = node.inputs[1 - outer];
      if (!is_scalar_constant(*b) || inner->op != node.op || inner->is_evaluated()) continue;
      for (int side = 0; side < 2; ++side) {
        const ir::NodePtr& a = inner->inputs[side];
        const ir::NodePtr& x = inner->inputs[1 - side];
        if (!is_scalar_constant(*a) || is_constant(*x)) continue;
        if (floating && !(is_growing_power_of_two(constant_value(*a).floating) &&
                          is_growing_power_of_two(constant_value(*b).floating))) {
          continue;
        }
        ir::Node combined;
        combined.op = node.op;
        combined.dtype = node.dtype;
        combined.inputs = {a, b};
        const std::optional<ir::ScalarParam> value = detail::fold_elementwise(combined);
        if (!value || (floating && !std::isfinite(value->floating))) continue;
        ir::NodePtr constant = detail::make_scalar_constant(node.dtype, *value, node.location);
        graph_.nodes.push_back(constant);
        node.inputs = {x, std::move(constant)};
        return Rewrite::in_place();
      }
    }
    return Rewrite::none();
  }

  static Rewrite simplify_movement(ir::Node& node) {
    const ir::NodePtr input = node.inputs[0];
    if (is_constant(*input)) {
      detail::become_full(node, input->params[0]);
      return Rewrite::in_place();
    }
    const bool nested = input->op == node.op && !input->is_evaluated();
    switch (node.op) {
      case ir::Op::Reshape:
      case ir::Op::BroadcastTo:
        if (input->shape == node.shape) return Rewrite::replace_with(input);
        if (nested) {
          node.inputs = {input->inputs[0]};
          return Rewrite::in_place();
        }
        break;
      case ir::Op::Transpose:
        if (is_identity(node.axes())) return Rewrite::replace_with(input);
        if (nested) {
          std::vector<int64_t> composed(node.axes().size());
          for (size_t i = 0; i < composed.size(); ++i) composed[i] = input->axes()[node.axes()[i]];
          node.set_attributes().axes = std::move(composed);
          node.inputs = {input->inputs[0]};
          return Rewrite::in_place();
        }
        break;
      default: break;
    }
    return Rewrite::none();
  }

  ir::Graph& graph_;
  // A replaced node -> the node that computes its value, for this round.
  std::unordered_map<const ir::Node*, ir::NodePtr> replacement_;
};

class Simplification final : public Pass {
 public:
  std::string_view name() const override { return "simplify"; }

  void run(PassContext& context) override {
    Simplifier simplifier(context.graph);
    for (int round = 0; round < kMaxRounds; ++round) {
      if (!simplifier.run_round()) break;
    }
    detail::remove_unreachable_nodes(context.graph);
  }
};

}  // namespace

std::unique_ptr<Pass> make_simplification() { return std::make_unique<Simplification>(); }

}  // namespace lz::passes
