#include "passes/graph_signature.h"

#include <algorithm>
#include <bit>
#include <functional>
#include <iterator>
#include <vector>

#include "passes/constant_folding.h"
#include "support/hash.h"

namespace lz::passes {
namespace {

using support::hash_mix;

bool is_random(ir::Op op) { return op == ir::Op::RandomUniform || op == ir::Op::RandomNormal; }

}  // namespace

bool carries_values(const ir::Node& node) {
  return node.op == ir::Op::Data || node.op == ir::Op::Full || node.op == ir::Op::Arange ||
         is_random(node.op) || ir::is_collective(node.op) || node.op == ir::Op::Slice;
}

bool same_bits(const ir::ScalarParam& a, const ir::ScalarParam& b) {
  return std::bit_cast<uint64_t>(a.floating) == std::bit_cast<uint64_t>(b.floating) &&
         a.integer == b.integer;
}

namespace {

/// Whether the simplifier may have computed a value from `node`'s params: constants fold.
bool is_foldable(const ir::Node& node) { return detail::is_constant(node); }

/// Equal buffers, params, seeds, starts and collectives: what a hit copies.
bool same_values(const ir::Node& a, const ir::Node& b) {
  return a.buffer == b.buffer && same_bits(a.params[0], b.params[0]) &&
         same_bits(a.params[1], b.params[1]) && a.seed == b.seed && a.starts() == b.starts() &&
         a.collective() == b.collective();
}

/// Value-carrying nodes equal as common-subexpression elimination compares their values
/// (passes/common_subexpression_elimination.cpp), inputs aside: the signature holds those.
uint64_t same_values_hash(const ir::Node& node) {
  uint64_t hash = hash_mix(static_cast<uint64_t>(node.op), static_cast<uint64_t>(node.dtype));
  for (int64_t extent : node.shape) hash = hash_mix(hash, static_cast<uint64_t>(extent));
  hash = hash_mix(hash, std::hash<const void*>{}(node.buffer.get()));
  for (const ir::ScalarParam& param : node.params) {
    hash = hash_mix(hash, std::bit_cast<uint64_t>(param.floating));
  }
  hash = hash_mix(hash, node.seed);
  for (int64_t start : node.starts()) hash = hash_mix(hash, static_cast<uint64_t>(start));
  return hash_mix(hash, node.collective().sequence);
}

bool same_value_carriers(const ir::Node& a, const ir::Node& b) {
  return a.op == b.op && a.dtype == b.dtype && a.shape == b.shape && same_values(a, b);
}

/// The first of each group of equal value carriers of a graph, by position: one flat table with
/// open addressing, as a signature is taken at every evaluation and half the nodes of a loop
/// such as x = x + 1 carry values.
class FirstEqualCarrier {
 public:
  explicit FirstEqualCarrier(const ir::Graph& graph) : graph_(graph) {
    size_t capacity = 16;
    while (capacity < 2 * graph.nodes.size()) capacity *= 2;
    slots_.assign(capacity, -1);
  }

  /// The position of the first carrier equal to graph.nodes[position], remembering it when it
  /// is the first.
  int64_t first_of(int64_t position) {
    const ir::Node& node = *graph_.nodes[position];
    const size_t mask = slots_.size() - 1;
    for (size_t slot = same_values_hash(node) & mask;; slot = (slot + 1) & mask) {
      if (slots_[slot] < 0) {
        slots_[slot] = position;
        return position;
      }
      if (same_value_carriers(*graph_.nodes[slots_[slot]], node)) return slots_[slot];
    }
  }

 private:
  const ir::Graph& graph_;
  std::vector<int64_t> slots_;  // positions; -1 is empty; at most half full
};

}  // namespace

std::vector<int64_t> graph_signature(const ir::Graph& graph, const ir::Wiring& wiring,
                                     const PassOptions& options) {
  std::vector<int64_t> signature;
  signature.reserve(graph.nodes.size() * 8 + graph.outputs.size() + 8);
  signature.insert(signature.end(), {options.fusion, options.max_kernel_ops,
                                     options.max_kernel_inputs, options.streams});
  FirstEqualCarrier first_equal(graph);
  std::vector<std::pair<uint64_t, int64_t>> collectives;  // (sequence, position)
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const ir::Node& node = *graph.nodes[i];
    if (ir::is_collective(node.op)) {
      collectives.emplace_back(node.collective().sequence, static_cast<int64_t>(i));
    }
    // 8 bits each of op, dtype, device kind and flags, then the device index; then the lengths
    // of the lists that follow, 12 bits each unless one is longer.
    signature.push_back(static_cast<int64_t>(node.op) | static_cast<int64_t>(node.dtype) << 8 |
                        static_cast<int64_t>(node.device.kind()) << 16 |
                        int64_t{node.is_evaluated() + 2 * node.keepdims} << 24 |
                        int64_t{node.device.index()} << 32);
    const size_t lengths[] = {node.shape.size(), node.axes().size(), node.steps().size(),
                              node.starts().size(), node.inputs.size()};
    if (std::all_of(std::begin(lengths), std::end(lengths), [](size_t n) { return n < 4096; })) {
      int64_t packed = 0;
      for (size_t length : lengths) packed = packed << 12 | static_cast<int64_t>(length);
      signature.push_back(packed);
    } else {
      signature.push_back(-1);
      for (size_t length : lengths) signature.push_back(static_cast<int64_t>(length));
    }
    // Element by element: these lists are short, and a range insert calls memmove for each.
    for (int64_t extent : node.shape) signature.push_back(extent);
    for (int64_t axis : node.axes()) signature.push_back(axis);
    for (int64_t step : node.steps()) signature.push_back(step);
    for (int32_t input : wiring.inputs_of(i)) signature.push_back(input);
    signature.push_back(is_foldable(node) ? detail::simplifier_class(node) : 0);
    signature.push_back(carries_values(node) ? first_equal.first_of(static_cast<int64_t>(i)) : -1);
  }
  signature.push_back(static_cast<int64_t>(graph.outputs.size()));
  for (int32_t output : wiring.outputs) signature.push_back(output);
  // The plan runs collectives in the order they were recorded (passes/collective_hoisting.h),
  // which the graph's order need not follow: a recording of the same structure in another order
  // needs another plan.
  std::sort(collectives.begin(), collectives.end());
  for (const auto& [sequence, position] : collectives) signature.push_back(position);
  return signature;
}

uint64_t signature_hash(const std::vector<int64_t>& signature) {
  uint64_t hash = signature.size();
  for (int64_t value : signature) hash = hash_mix(hash, static_cast<uint64_t>(value));
  return hash;
}

}  // namespace lz::passes
