#include "ir/node.h"

#include "ir/pending_list.h"

namespace lz::ir {
namespace {

// The inputs whose release an outer ~Node on this thread's stack has taken over, or null when no
// ~Node is running. A plain pointer (to a vector on that ~Node's stack) because a thread_local
// with a destructor would be gone before static tensors are destroyed at exit.
thread_local std::vector<NodePtr>* deferred_releases = nullptr;

}  // namespace

Node::~Node() {
  if (pending) PendingList::global().remove(this);
  // Releasing inputs directly would recurse once per node of a chain and overflow the stack on
  // deep graphs. Instead nested ~Node calls park their inputs with the outermost one, which
  // releases them one at a time, so the depth never exceeds two destructors.
  if (deferred_releases != nullptr) {
    for (NodePtr& input : inputs) deferred_releases->push_back(std::move(input));
    return;
  }
  std::vector<NodePtr> parked = std::move(inputs);
  deferred_releases = &parked;
  while (!parked.empty()) {
    NodePtr last = std::move(parked.back());
    parked.pop_back();
    last.reset();
  }
  deferred_releases = nullptr;
}

void Node::become_data(std::shared_ptr<runtime::Buffer> result) {
  buffer = std::move(result);
  op = Op::Data;
  keepdims = false;
  axes.clear();
  starts.clear();
  steps.clear();
  params[0] = params[1] = ScalarParam{};
  seed = 0;
  std::vector<NodePtr> released = std::move(inputs);
  inputs.clear();
  // `released` goes out of scope here; if it holds the last reference to a long chain, the
  // chain's ~Node calls drain it iteratively.
}

}  // namespace lz::ir
