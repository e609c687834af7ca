// A chain of a million adds: every walk over the graph must be iterative, or these tests overflow
// the stack.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <span>
#include <string>

#include "graph_builder.h"
#include "ir/clone.h"
#include "ir/printer.h"
#include "ir/verifier.h"

namespace lz::ir {
namespace {

constexpr int64_t kDepth = 1'000'000;

// x + x + x + ... as the frontend records it: each add holds the previous one and the leaf `x`.
NodePtr chain_of_adds(const NodePtr& x, int64_t depth) {
  NodePtr last = x;
  for (int64_t i = 0; i < depth; ++i) {
    auto node = std::make_shared<Node>();
    node->op = Op::Add;
    node->dtype = x->dtype;
    node->shape = x->shape;
    node->inputs = {std::move(last), x};
    last = std::move(node);
  }
  return last;
}

// One story rather than separate tests, so that the chain is built once: each step is a walk
// that would overflow the stack if it recursed.
TEST(DeepGraphTest, MillionAddChainIsCollectedVerifiedPrintedClonedAndFreedWithoutRecursion) {
  const NodePtr x = test::data(float32, {2});
  NodePtr last = chain_of_adds(x, kDepth);
  Graph graph = Graph::collect(std::span<const NodePtr>(&last, 1));
  ASSERT_EQ(static_cast<int64_t>(graph.nodes.size()), kDepth + 1);
  EXPECT_EQ(graph.nodes.front(), x);
  EXPECT_EQ(graph.nodes.back(), last);
  EXPECT_EQ(graph.nodes.back()->inputs[0], graph.nodes[kDepth - 1]);

  EXPECT_NO_THROW(verify(graph));

  const std::string text = print_graph(graph);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), kDepth + 2);
  EXPECT_TRUE(text.starts_with("%0 = data() : f32[2]\n%1 = add(%0, %0) : f32[2]\n"));
  EXPECT_TRUE(text.ends_with("%1000000 = add(%999999, %0) : f32[2]\nreturn %1000000\n"));

  Graph copy = clone_graph(graph);
  ASSERT_EQ(copy.nodes.size(), graph.nodes.size());
  EXPECT_NE(copy.nodes.back(), last);
  EXPECT_EQ(copy.nodes.back()->inputs[0], copy.nodes[kDepth - 1]);
  copy = Graph{};

  // `x`, the graph, and each add (the first one twice: x + x).
  EXPECT_EQ(x.use_count(), 1 + 1 + (kDepth + 1));
  graph = Graph{};
  last.reset();
  EXPECT_EQ(x.use_count(), 1);
}

}  // namespace
}  // namespace lz::ir
