// Each node's position in a graph's node list, looked up by the node's address.
//
// Every evaluation builds such a table several times (the passes, the plan cache, deciding what
// to keep) over graphs of up to millions of nodes, so it is one flat array with open addressing
// and linear probing: one allocation in all (none up to 8 nodes), where a std::unordered_map
// allocates per entry. Its interface is the part of unordered_map's that lazuli uses: find, at,
// contains, size.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <utility>
#include <vector>

#include "ir/node.h"

namespace lz::ir {

class NodePositions {
 public:
  using Entry = std::pair<const Node*, int64_t>;

  NodePositions() = default;
  /// The positions of `nodes`: nodes[i] at i (the first position of a node listed twice).
  explicit NodePositions(std::span<const NodePtr> nodes) {
    reserve(nodes.size());
    for (size_t i = 0; i < nodes.size(); ++i) insert(nodes[i].get(), static_cast<int64_t>(i));
  }

  /// Room for `count` entries without growing.
  void reserve(size_t count) {
    size_t capacity = capacity_;
    while (capacity < 2 * count) capacity *= 2;  // at most half full: short probes
    if (capacity > capacity_) rehash(capacity);
  }

  /// Adds `node` at `position`; false (and nothing changes) when it is there already.
  bool insert(const Node* node, int64_t position) {
    if (2 * (size_ + 1) > capacity_) rehash(2 * capacity_);
    Entry& slot = slots()[probe(node)];
    if (slot.first == node) return false;
    slot = {node, position};
    ++size_;
    return true;
  }

  /// Adds `node` at the next position, size(): a walk's table of the nodes it reached, in the
  /// order it reached them. False when it is there already.
  bool add(const Node* node) { return insert(node, static_cast<int64_t>(size_)); }

  /// The entry of `node`, or end().
  const Entry* find(const Node* node) const {
    const Entry& slot = slots()[probe(node)];
    return slot.first == node ? &slot : end();
  }
  const Entry* end() const { return nullptr; }

  bool contains(const Node* node) const { return find(node) != end(); }

  /// The position of `node`; throws std::out_of_range when it is not in the table.
  int64_t at(const Node* node) const {
    const Entry* found = find(node);
    if (found == end()) throw std::out_of_range("lz::ir::NodePositions::at: node not in graph");
    return found->second;
  }

  size_t size() const { return size_; }

 private:
  /// Slots kept in the object itself: the graph of a round trip or a small kernel allocates
  /// nothing.
  static constexpr size_t kInlineSlots = 16;

  // Chosen by capacity rather than held as a pointer, so the defaults copy and move it.
  Entry* slots() { return capacity_ == kInlineSlots ? inline_slots_.data() : heap_slots_.data(); }
  const Entry* slots() const {
    return capacity_ == kInlineSlots ? inline_slots_.data() : heap_slots_.data();
  }

  /// The slot holding `node`, or the empty slot where it would go.
  size_t probe(const Node* node) const {
    const Entry* entries = slots();
    const size_t mask = capacity_ - 1;
    // Nodes are at least 16-byte aligned: drop the low bits, then spread with a multiply.
    size_t slot =
        static_cast<size_t>((reinterpret_cast<uintptr_t>(node) >> 4) * 0x9e3779b97f4a7c15ULL) >>
        (64 - shift_);
    while (entries[slot].first != nullptr && entries[slot].first != node) {
      slot = (slot + 1) & mask;
    }
    return slot;
  }

  void rehash(size_t capacity) {
    std::vector<Entry> old;
    if (capacity_ == kInlineSlots) {
      old.assign(inline_slots_.begin(), inline_slots_.end());
    } else {
      old.swap(heap_slots_);
    }
    heap_slots_.assign(capacity, Entry{nullptr, 0});
    capacity_ = capacity;
    shift_ = 0;
    while ((size_t{1} << shift_) < capacity) ++shift_;
    for (const Entry& entry : old) {
      if (entry.first != nullptr) heap_slots_[probe(entry.first)] = entry;
    }
  }

  std::array<Entry, kInlineSlots> inline_slots_{};  // {nullptr, 0} is empty
  std::vector<Entry> heap_slots_;                   // beyond kInlineSlots: a power of two
  size_t capacity_ = kInlineSlots;
  size_t size_ = 0;
  int shift_ = 4;  // log2(capacity_)
};

}  // namespace lz::ir
