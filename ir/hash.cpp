#include "ir/hash.h"

#include <span>
#include <vector>

namespace lz::ir {
namespace {

// Accumulates 64-bit words in order; each step mixes the whole state (splitmix64's finalizer),
// so one changed word, or the same words in another order, changes every bit of the result.
class Hasher {
 public:
  void add(uint64_t word) {
    uint64_t x = state_ + word * 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    state_ = x ^ (x >> 31);
  }
  void add_signed(int64_t word) { add(static_cast<uint64_t>(word)); }
  // The length first, so that [1,2],[3] and [1],[2,3] differ.
  void add_list(std::span<const int64_t> words) {
    add(words.size());
    for (int64_t word : words) add_signed(word);
  }
  uint64_t value() const { return state_; }

 private:
  uint64_t state_ = 0x6c617a756c69ULL;  // "lazuli"
};

constexpr uint64_t kNotInGraph = ~uint64_t{0};

void add_structural_attributes(Hasher& hasher, const Node& node) {
  switch (node.op) {
    case Op::Sum:
    case Op::Max:
    case Op::Min:
    case Op::Argmax:
    case Op::Argmin:
      hasher.add_list(node.axes);
      hasher.add(node.keepdims ? 1 : 0);
      break;
    case Op::Transpose:
    case Op::Concatenate:
    case Op::Gather:
    case Op::AllSum:
    case Op::AllMax:
    case Op::AllMin:
    case Op::AllGather:
    case Op::ReduceScatter:
    case Op::Broadcast: hasher.add_list(node.axes); break;
    case Op::Slice:
      hasher.add_list(node.starts);
      hasher.add_list(node.steps);
      break;
    default: break;
  }
}

}  // namespace

uint64_t structural_hash(const Graph& graph) {
  const auto positions = graph.index();
  const auto position_of = [&](const NodePtr& node) {
    const auto found = positions.find(node.get());
    return found == positions.end() ? kNotInGraph : static_cast<uint64_t>(found->second);
  };

  Hasher hasher;
  hasher.add(graph.nodes.size());
  for (const NodePtr& node : graph.nodes) {
    if (node == nullptr) {
      hasher.add(kNotInGraph);
      continue;
    }
    hasher.add(static_cast<uint64_t>(node->op));
    hasher.add(static_cast<uint64_t>(node->dtype));
    hasher.add_list(node->shape);
    hasher.add(node->inputs.size());
    for (const NodePtr& input : node->inputs) hasher.add(position_of(input));
    add_structural_attributes(hasher, *node);
  }
  hasher.add(graph.outputs.size());
  for (const NodePtr& output : graph.outputs) hasher.add(position_of(output));
  return hasher.value();
}

}  // namespace lz::ir
