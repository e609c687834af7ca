// "cse": merges nodes that compute the same value into the first of them.
//
// One forward walk in topological order. Each node's inputs are first redirected to the nodes
// that replaced them, so two nodes are the same exactly when their own fields and their input
// pointers are equal: no recursive comparison, and the whole pass is linear in the graph. The
// table stores node pointers and hashes the fields in place (no key objects are built), because
// this pass runs at every evaluation over graphs of up to millions of nodes.
//
// Equality is deliberately strict:
//  - scalar params compare bitwise, so 0.0 and -0.0 differ and a NaN equals only the same NaN;
//  - data leaves, and any node that already holds a buffer, are the same only when they share
//    the buffer (a parsed data leaf without one is unique);
//  - random ops compare like any other op: they are counter-based, so equal seed, params and
//    shape give equal values.
#include <bit>
#include <cstdint>
#include <functional>
#include <span>
#include <unordered_map>
#include <unordered_set>

#include "passes/dead_code_elimination.h"
#include "passes/pass.h"
#include "support/hash.h"

namespace lz::passes {
namespace {

using support::hash_mix;

uint64_t mix_all(uint64_t seed, std::span<const int64_t> values) {
  seed = hash_mix(seed, values.size());
  for (int64_t value : values) seed = hash_mix(seed, static_cast<uint64_t>(value));
  return seed;
}

bool holds_buffer(const ir::Node& node) { return node.op == ir::Op::Data || node.is_evaluated(); }

bool same_param(const ir::ScalarParam& a, const ir::ScalarParam& b) {
  return std::bit_cast<uint64_t>(a.floating) == std::bit_cast<uint64_t>(b.floating) &&
         a.integer == b.integer;
}

struct NodeHash {
  size_t operator()(const ir::Node* node) const {
    uint64_t hash = hash_mix(static_cast<uint64_t>(node->op), static_cast<uint64_t>(node->dtype));
    hash = mix_all(hash, node->shape);
    if (holds_buffer(*node)) return hash_mix(hash, std::hash<const void*>{}(node->buffer.get()));
    hash = hash_mix(hash, node->keepdims);
    hash = mix_all(hash, node->axes());
    hash = mix_all(hash, node->starts());
    hash = mix_all(hash, node->steps());
    hash = hash_mix(hash, node->collective().sequence);
    for (const ir::ScalarParam& param : node->params) {
      hash = hash_mix(hash, std::bit_cast<uint64_t>(param.floating));
      hash = hash_mix(hash, static_cast<uint64_t>(param.integer));
    }
    hash = hash_mix(hash, node->seed);
    for (const ir::NodePtr& input : node->inputs) {
      hash = hash_mix(hash, std::hash<const void*>{}(input.get()));
    }
    return static_cast<size_t>(hash);
  }
};

struct NodeEqual {
  int64_t* comparisons;  // counted into PassContext::node_comparisons

  bool operator()(const ir::Node* a, const ir::Node* b) const {
    if (a == b) return true;
    ++*comparisons;
    if (a->op != b->op || a->dtype != b->dtype || a->shape != b->shape) return false;
    if (holds_buffer(*a) || holds_buffer(*b)) {
      return a->buffer != nullptr && a->buffer == b->buffer;
    }
    return a->keepdims == b->keepdims && a->attributes() == b->attributes() &&
           same_param(a->params[0], b->params[0]) && same_param(a->params[1], b->params[1]) &&
           a->seed == b->seed &&
           a->inputs == b->inputs;  // compares the pointers, already canonical
  }
};

class CommonSubexpressionElimination final : public Pass {
 public:
  std::string_view name() const override { return "cse"; }

  void run(PassContext& context) override {
    ir::Graph& graph = context.graph;
    // A duplicate -> the first node computing its value.
    std::unordered_map<const ir::Node*, ir::NodePtr> replacement;
    int64_t comparisons = 0;
    std::unordered_set<ir::Node*, NodeHash, NodeEqual> seen(graph.nodes.size(), NodeHash{},
                                                            NodeEqual{&comparisons});
    const auto canonical = [&](ir::NodePtr& node) {
      if (replacement.empty()) return;
      const auto found = replacement.find(node.get());
      if (found != replacement.end()) node = found->second;
    };
    for (const ir::NodePtr& node : graph.nodes) {
      for (ir::NodePtr& input : node->inputs) canonical(input);
      // A data leaf without a buffer equals no other node; it need not enter the table.
      if (node->op == ir::Op::Data && node->buffer == nullptr) continue;
      const auto [first, inserted] = seen.insert(node.get());
      if (!inserted) replacement.emplace(node.get(), (*first)->shared_from_this());
    }
    context.node_comparisons += comparisons;
    if (replacement.empty()) return;
    for (ir::NodePtr& output : graph.outputs) canonical(output);
    detail::remove_unreachable_nodes(graph);
  }
};

}  // namespace

std::unique_ptr<Pass> make_common_subexpression_elimination() {
  return std::make_unique<CommonSubexpressionElimination>();
}

}  // namespace lz::passes
