// A node's inputs: the first three held in the node itself.
//
// Almost every recorded op has one to three inputs (where has three), and recording one must
// not allocate; a std::vector would, once per op, and walks over the graph would follow a
// pointer per node to a block of its own. Where lazuli reads inputs it needs what std::vector
// offers for it: iteration, size, indexing, appending, and building from a list.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <utility>
#include <vector>

namespace lz::ir {

struct Node;
using NodePtr = std::shared_ptr<Node>;

class NodeInputs {
 public:
  static constexpr uint32_t kInline = 3;

  NodeInputs() = default;
  NodeInputs(std::initializer_list<NodePtr> inputs) {
    reserve(inputs.size());
    for (const NodePtr& input : inputs) push_back(input);
  }
  // Implicit, as a std::vector of inputs is what ops collect before recording.
  NodeInputs(std::vector<NodePtr>&& inputs) {  // NOLINT(google-explicit-constructor)
    reserve(inputs.size());
    for (NodePtr& input : inputs) push_back(std::move(input));
    inputs.clear();
  }
  NodeInputs(const NodeInputs& other) {
    reserve(other.size());
    for (const NodePtr& input : other) push_back(input);
  }
  NodeInputs(NodeInputs&& other) noexcept { take(other); }
  NodeInputs& operator=(const NodeInputs& other) {
    if (this != &other) *this = NodeInputs(other);
    return *this;
  }
  NodeInputs& operator=(NodeInputs&& other) noexcept {
    if (this != &other) {
      // Taken before this list lets go of its inputs, which may own `other`
      // (node->inputs = std::move(node->inputs[0]->inputs)).
      NodeInputs taken(std::move(other));
      clear();
      heap_.reset();
      capacity_ = kInline;
      take(taken);
    }
    return *this;
  }
  ~NodeInputs() = default;

  NodePtr* begin() { return data(); }
  NodePtr* end() { return data() + size_; }
  const NodePtr* begin() const { return data(); }
  const NodePtr* end() const { return data() + size_; }
  NodePtr* data() { return heap_ ? heap_.get() : inline_; }
  const NodePtr* data() const { return heap_ ? heap_.get() : inline_; }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  NodePtr& operator[](size_t i) { return data()[i]; }
  const NodePtr& operator[](size_t i) const { return data()[i]; }
  const NodePtr& front() const { return data()[0]; }
  const NodePtr& back() const { return data()[size_ - 1]; }

  // NOLINTNEXTLINE(google-explicit-constructor): read as a list wherever one is taken
  operator std::span<const NodePtr>() const { return {data(), size_}; }

  void reserve(size_t count) {
    if (count <= capacity_) return;
    auto grown = std::make_unique<NodePtr[]>(count);
    std::move(begin(), end(), grown.get());
    std::fill(inline_, inline_ + kInline, nullptr);
    heap_ = std::move(grown);
    capacity_ = static_cast<uint32_t>(count);
  }
  void push_back(NodePtr input) {
    if (size_ == capacity_) reserve(2 * size_t{capacity_});
    data()[size_++] = std::move(input);
  }
  /// Releases every input; the room stays.
  void clear() {
    for (NodePtr& input : *this) input.reset();
    size_ = 0;
  }

  friend bool operator==(const NodeInputs& a, const NodeInputs& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  /// Takes `other`'s inputs, leaving it empty; this one is empty with inline room.
  void take(NodeInputs& other) {
    if (other.heap_) {
      heap_ = std::move(other.heap_);
      capacity_ = other.capacity_;
    } else {
      std::move(other.inline_, other.inline_ + other.size_, inline_);
    }
    size_ = other.size_;
    other.size_ = 0;
    other.capacity_ = kInline;
  }

  NodePtr inline_[kInline];
  std::unique_ptr<NodePtr[]> heap_;  // when more than kInline were ever held
  uint32_t size_ = 0;
  uint32_t capacity_ = kInline;
};

}  // namespace lz::ir
