#include "ir/node.h"

#include "ir/pending_list.h"

namespace lz::ir {
namespace {

// Nodes whose destruction was deferred by ~Node, and whether a ~Node further up this thread's
// stack is already draining them.
thread_local std::vector<NodePtr> deferred_releases;
thread_local bool draining_releases = false;

}  // namespace

Node::~Node() {
  if (pending) PendingList::global().remove(this);
  // Releasing inputs directly would recurse once per node of a chain and overflow the stack on
  // deep graphs. Instead the inputs are parked, and only the outermost ~Node releases them, one
  // at a time, so the depth never exceeds two destructors.
  for (NodePtr& input : inputs) deferred_releases.push_back(std::move(input));
  inputs.clear();
  if (draining_releases) return;
  draining_releases = true;
  while (!deferred_releases.empty()) {
    NodePtr last = std::move(deferred_releases.back());
    deferred_releases.pop_back();
    last.reset();
  }
  draining_releases = false;
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
