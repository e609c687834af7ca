// The recorded nodes that have not been computed yet: what `waitall` must evaluate.
#pragma once

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
  int64_t size();

 private:
  std::mutex mutex_;
  Node* head_ = nullptr;
  Node* tail_ = nullptr;
  int64_t size_ = 0;
};

}  // namespace lz::ir
