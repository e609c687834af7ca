// A node's inputs: three kept in the node, more on the heap, with std::vector's meaning for
// every operation lazuli uses.
#include <gtest/gtest.h>

#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "ir/node.h"

namespace lz::ir {
namespace {

std::vector<NodePtr> fresh_nodes(int count) {
  std::vector<NodePtr> nodes;
  for (int i = 0; i < count; ++i) nodes.push_back(std::make_shared<Node>());
  return nodes;
}

std::vector<Node*> addresses(std::span<const NodePtr> inputs) {
  std::vector<Node*> result;
  for (const NodePtr& input : inputs) result.push_back(input.get());
  return result;
}

TEST(NodeInputsTest, AppendedInputsKeepTheirOrderPastTheInlineRoom) {
  const std::vector<NodePtr> nodes = fresh_nodes(5);
  NodeInputs inputs;
  EXPECT_TRUE(inputs.empty());
  for (const NodePtr& node : nodes) inputs.push_back(node);
  ASSERT_EQ(inputs.size(), 5u);
  EXPECT_EQ(addresses(inputs), addresses(nodes));
  EXPECT_EQ(inputs.front(), nodes.front());
  EXPECT_EQ(inputs.back(), nodes.back());
  EXPECT_EQ(inputs[3], nodes[3]);
  for (const NodePtr& node : nodes) EXPECT_EQ(node.use_count(), 2);
}

TEST(NodeInputsTest, BuiltFromAListOrAVectorHoldsTheSameNodes) {
  const std::vector<NodePtr> nodes = fresh_nodes(3);
  const NodeInputs listed = {nodes[0], nodes[1], nodes[2]};
  std::vector<NodePtr> vector = nodes;
  const NodeInputs moved = std::move(vector);
  EXPECT_EQ(addresses(listed), addresses(nodes));
  EXPECT_TRUE(listed == moved);
  EXPECT_FALSE(listed == NodeInputs({nodes[0], nodes[1]}));
  EXPECT_FALSE(listed == NodeInputs({nodes[0], nodes[2], nodes[1]}));
  for (const NodePtr& node : nodes) EXPECT_EQ(node.use_count(), 3);  // nodes, listed, moved
}

TEST(NodeInputsTest, MovingTakesTheInputsAndCopyingSharesThem) {
  for (int count : {1, 2, 3, 4, 6}) {
    const std::vector<NodePtr> nodes = fresh_nodes(count);
    NodeInputs original{std::vector<NodePtr>(nodes)};
    NodeInputs copy = original;
    NodeInputs moved = std::move(original);
    EXPECT_TRUE(original.empty()) << count;  // NOLINT(bugprone-use-after-move): defined empty
    EXPECT_EQ(addresses(moved), addresses(nodes)) << count;
    EXPECT_EQ(addresses(copy), addresses(nodes)) << count;
    for (const NodePtr& node : nodes) EXPECT_EQ(node.use_count(), 3) << count;

    NodeInputs assigned = {std::make_shared<Node>()};
    assigned = std::move(moved);
    EXPECT_EQ(addresses(assigned), addresses(nodes)) << count;
    copy = assigned;
    EXPECT_EQ(addresses(copy), addresses(nodes)) << count;
    original.push_back(nodes[0]);  // a moved-from list takes inputs again
    EXPECT_EQ(original.size(), 1u);
  }
}

TEST(NodeInputsTest, ClearingReleasesEveryInput) {
  const std::vector<NodePtr> nodes = fresh_nodes(4);
  std::weak_ptr<Node> only_here;
  NodeInputs inputs = {nodes[0], nodes[1], nodes[2], nodes[3]};
  {
    NodePtr temporary = std::make_shared<Node>();
    only_here = temporary;
    inputs.push_back(std::move(temporary));
  }
  inputs.clear();
  EXPECT_TRUE(inputs.empty());
  EXPECT_TRUE(only_here.expired());
  for (const NodePtr& node : nodes) EXPECT_EQ(node.use_count(), 1);
}

// ~Node releases inputs that others still hold directly, and parks those it frees: both kinds
// mixed, in a chain deep enough that recursion would overflow the stack.
TEST(NodeInputsTest, AChainWhoseLinksAreSometimesHeldElsewhereFreesIteratively) {
  std::vector<NodePtr> held;
  NodePtr last = std::make_shared<Node>();
  std::weak_ptr<Node> first = last;
  for (int i = 0; i < 500'000; ++i) {
    auto node = std::make_shared<Node>();
    node->inputs = {std::move(last)};
    if (i % 1000 == 0) held.push_back(node);
    last = std::move(node);
  }
  last.reset();
  EXPECT_FALSE(first.expired());  // the held links keep the start of the chain
  held.clear();
  EXPECT_TRUE(first.expired());
}

// y = y + y in a loop: each node reads the one before twice, so neither copy is the last
// reference until the other goes.
TEST(NodeInputsTest, AChainOfNodesReadingTheirInputTwiceFreesIteratively) {
  NodePtr last = std::make_shared<Node>();
  std::weak_ptr<Node> first = last;
  for (int i = 0; i < 500'000; ++i) {
    auto node = std::make_shared<Node>();
    node->inputs = {last, last};
    last = std::move(node);
  }
  last.reset();
  EXPECT_TRUE(first.expired());
}

TEST(NodeInputsTest, MovingAnInputsOwnListIntoItKeepsTheInputs) {
  const std::vector<NodePtr> leaves = fresh_nodes(2);
  auto inner = std::make_shared<Node>();
  inner->inputs = {leaves[0], leaves[1]};
  NodeInputs outer = {std::move(inner)};
  outer = std::move(outer[0]->inputs);  // frees the node whose list it reads
  EXPECT_EQ(addresses(outer), addresses(leaves));
}

}  // namespace
}  // namespace lz::ir
