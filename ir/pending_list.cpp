#include "ir/pending_list.h"

#include "support/hot_path.h"

namespace lz::ir {

PendingList& PendingList::global() {
  // Never destroyed: nodes held by static tensors may be released after main returns.
  static auto* list = new PendingList();
  return *list;
}

LZ_HOT_PATH void PendingList::add(Node* node) {
  std::lock_guard lock(mutex_);
  if (node->pending) return;
  node->pending = true;
  node->pending_prev = tail_;
  node->pending_next = nullptr;
  if (tail_ != nullptr)
    tail_->pending_next = node;
  else
    head_ = node;
  tail_ = node;
  // Only writers under the lock change it: a plain store, not a locked read-modify-write.
  size_.store(size_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

LZ_HOT_PATH void PendingList::remove(Node* node) {
  std::lock_guard lock(mutex_);
  if (!node->pending) return;
  if (node->pending_prev != nullptr)
    node->pending_prev->pending_next = node->pending_next;
  else
    head_ = node->pending_next;
  if (node->pending_next != nullptr)
    node->pending_next->pending_prev = node->pending_prev;
  else
    tail_ = node->pending_prev;
  node->pending = false;
  node->pending_prev = node->pending_next = nullptr;
  size_.store(size_.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
}

std::vector<NodePtr> PendingList::snapshot() {
  std::lock_guard lock(mutex_);
  std::vector<NodePtr> alive;
  alive.reserve(size_.load(std::memory_order_relaxed));
  for (Node* node = head_; node != nullptr; node = node->pending_next) {
    // A node whose last reference is being dropped right now cannot be locked; it is about to
    // remove itself and nobody can read it any more.
    if (NodePtr strong = node->weak_from_this().lock()) alive.push_back(std::move(strong));
  }
  return alive;
}

}  // namespace lz::ir
