#include <gtest/gtest.h>

#include <memory>

#include "ir/verifier.h"
#include "rewrite_checks.h"

namespace lz::passes {
namespace {

using test::rewrite;
using test::run_pass;

TEST(DeadCodeEliminationTest, RemovesNodesNoOutputReachesAndKeepsTheOrderOfTheRest) {
  EXPECT_EQ(rewrite("dce", R"(
    %a = data() : f32[3]
    %unused = exp(%a) : f32[3]
    %b = full() {value=2} : f32[]
    %also_unused = neg(%unused) : f32[3]
    %c = mul(%a, %b) : f32[3]
    %d = sum(%c) {axes=[0], keepdims=false} : f32[]
    return %d, %c
  )"),
            "%0 = data() : f32[3]\n"
            "%1 = full() {value=2} : f32[]\n"
            "%2 = mul(%0, %1) : f32[3]\n"
            "%3 = sum(%2) {axes=[0], keepdims=false} : f32[]\n"
            "return %3, %2\n");
}

TEST(DeadCodeEliminationTest, RemovesUnusedLeavesAndKeepsAnOutputListedTwice) {
  EXPECT_EQ(rewrite("dce", R"(
    %a = data() : i64[2]
    %b = data() : i64[2]
    %r = random_uniform() {seed=3, low=0, high=1} : f32[4]
    %c = neg(%b) : i64[2]
    return %c, %b, %c
  )"),
            "%0 = data() : i64[2]\n"
            "%1 = neg(%0) : i64[2]\n"
            "return %1, %0, %1\n");
}

TEST(DeadCodeEliminationTest, GraphWithEveryNodeLiveIsUnchanged) {
  const std::string text =
      "%0 = data() : f32[2,3]\n"
      "%1 = transpose(%0) {perm=[1,0]} : f32[3,2]\n"
      "%2 = reshape(%1) : f32[6]\n"
      "return %2, %0\n";
  EXPECT_EQ(rewrite("dce", text), text);
}

TEST(DeadCodeEliminationTest, DeepChainWithADeadBranchIsWalkedWithoutRecursion) {
  // Deeper than any recursive walk survives on a default stack.
  constexpr int kDepth = 1'000'000;
  ir::Graph graph = test::negation_chain(kDepth);
  const ir::NodePtr leaf = graph.nodes.front();
  graph.outputs = {graph.nodes[kDepth / 2]};  // the second half of the chain is dead

  const ir::Graph result = run_pass("dce", std::move(graph));

  ASSERT_EQ(result.nodes.size(), static_cast<size_t>(kDepth / 2 + 1));
  EXPECT_EQ(result.nodes.front(), leaf);
  EXPECT_EQ(result.nodes.back(), result.outputs[0]);
}

}  // namespace
}  // namespace lz::passes
