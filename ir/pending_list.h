// The recorded nodes that have not been computed yet: what `waitall` must evaluate.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "ir/node.h"

namespace lz::ir {

/// An intrusive list of pending nodes. Adding and removing are O(1) and allocate nothing, because
/// every recorded op passes through here. A node leaves the list when it is computed or destroyed.
class PendingList {
 public:
  static PendingList& global();

  void add(Node* node);
  /// No effect if `node` is not in the list.
  void remove(Node* node);
  /// The pending nodes that are still alive, oldest first.
  std::vector<NodePtr> snapshot();
  /// Without taking the lock: checked after every recorded op.
  int64_t size() const { return size_.load(std::memory_order_relaxed); }

 private:
  std::mutex mutex_;
  Node* head_ = nullptr;
  Node* tail_ = nullptr;
  std::atomic<int64_t> size_{0};
};

}  // namespace lz::ir
