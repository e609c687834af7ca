// ir::NodePositions against std::unordered_map, the table it replaces: the same answers for
// every node asked, through growth, duplicates and nodes it does not hold.
#include "ir/node_positions.h"

#include <gtest/gtest.h>

#include <random>
#include <stdexcept>
#include <unordered_map>
#include <vector>

namespace lz::ir {
namespace {

TEST(NodePositionsTest, AnswersAsAnUnorderedMapDoesThroughGrowth) {
  std::vector<NodePtr> nodes;
  for (int i = 0; i < 5000; ++i) nodes.push_back(new_node());
  std::mt19937 engine(7);
  std::uniform_int_distribution<size_t> pick(0, nodes.size() - 1);
  NodePositions table;
  std::unordered_map<const Node*, int64_t> expected;
  for (int64_t step = 0; step < 8000; ++step) {
    const Node* node = nodes[pick(engine)].get();
    const bool inserted = expected.emplace(node, step).second;
    ASSERT_EQ(table.insert(node, step), inserted) << "step " << step;
    ASSERT_EQ(table.size(), expected.size());
  }
  for (const NodePtr& node : nodes) {
    const auto found = expected.find(node.get());
    if (found == expected.end()) {
      EXPECT_FALSE(table.contains(node.get()));
      EXPECT_EQ(table.find(node.get()), table.end());
      EXPECT_THROW(table.at(node.get()), std::out_of_range);
    } else {
      ASSERT_TRUE(table.contains(node.get()));
      EXPECT_EQ(table.find(node.get())->first, node.get());
      EXPECT_EQ(table.at(node.get()), found->second);
    }
  }
}

TEST(NodePositionsTest, ANodeListedTwiceKeepsItsFirstPosition) {
  const NodePtr a = new_node(), b = new_node();
  const std::vector<NodePtr> nodes = {a, b, a};
  const NodePositions positions(nodes);
  EXPECT_EQ(positions.size(), 2u);
  EXPECT_EQ(positions.at(a.get()), 0);
  EXPECT_EQ(positions.at(b.get()), 1);
}

TEST(NodePositionsTest, AnEmptyTableHoldsNothing) {
  const NodePositions empty;
  const NodePtr node = new_node();
  EXPECT_EQ(empty.size(), 0u);
  EXPECT_FALSE(empty.contains(node.get()));
  EXPECT_THROW(empty.at(node.get()), std::out_of_range);
}

}  // namespace
}  // namespace lz::ir
