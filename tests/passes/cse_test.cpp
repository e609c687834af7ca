#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>

#include "rewrite_checks.h"

namespace lz::passes {
namespace {

using test::expect_rewrite_keeps_values;
using test::rewrite;
using test::run_pass;

TEST(CommonSubexpressionEliminationTest, DuplicateNodesAreMergedIntoTheFirstAndConsumersRewired) {
  expect_rewrite_keeps_values("cse", R"(
    %a = data() : f32[4]
    %b = data() : f32[4]
    %s1 = add(%a, %b) : f32[4]
    %s2 = add(%a, %b) : f32[4]
    %e1 = exp(%s1) : f32[4]
    %e2 = exp(%s2) : f32[4]
    %m = mul(%e1, %e2) : f32[4]
    return %m
  )",
                              "%0 = data() : f32[4]\n"
                              "%1 = data() : f32[4]\n"
                              "%2 = add(%0, %1) : f32[4]\n"
                              "%3 = exp(%2) : f32[4]\n"
                              "%4 = mul(%3, %3) : f32[4]\n"
                              "return %4\n");
}

TEST(CommonSubexpressionEliminationTest, OutputsKeepTheirPositionsAndPointAtTheFirstOccurrence) {
  expect_rewrite_keeps_values("cse", R"(
    %a = data() : i32[3]
    %x = neg(%a) : i32[3]
    %y = neg(%a) : i32[3]
    %z = abs(%y) : i32[3]
    return %y, %z, %x
  )",
                              "%0 = data() : i32[3]\n"
                              "%1 = neg(%0) : i32[3]\n"
                              "%2 = abs(%1) : i32[3]\n"
                              "return %1, %2, %1\n");
}

TEST(CommonSubexpressionEliminationTest, OperandOrderAndAttributesDistinguishNodes) {
  const std::string text =
      "%0 = data() : f32[2,3]\n"
      "%1 = data() : f32[2,3]\n"
      "%2 = sub(%0, %1) : f32[2,3]\n"
      "%3 = sub(%1, %0) : f32[2,3]\n"
      "%4 = sum(%0) {axes=[0], keepdims=false} : f32[3]\n"
      "%5 = sum(%0) {axes=[0], keepdims=true} : f32[1,3]\n"
      "%6 = sum(%0) {axes=[1], keepdims=true} : f32[2,1]\n"
      "%7 = slice(%0) {starts=[0,0], steps=[1,2]} : f32[2,2]\n"
      "%8 = slice(%0) {starts=[0,1], steps=[1,1]} : f32[2,2]\n"
      "%9 = astype(%0) : f64[2,3]\n"
      "%10 = astype(%0) : i32[2,3]\n"
      "%11 = reshape(%0) : f32[6]\n"
      "%12 = reshape(%0) : f32[3,2]\n"
      "return %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12\n";
  EXPECT_EQ(rewrite("cse", text), text);
}

TEST(CommonSubexpressionEliminationTest, EqualConstantsMergeButPositiveAndNegativeZeroDoNot) {
  EXPECT_EQ(rewrite("cse", R"(
    %a = full() {value=0} : f32[]
    %b = full() {value=-0} : f32[]
    %c = full() {value=0} : f32[]
    %d = full() {value=0} : f64[]
    %e = full() {value=0} : f32[2]
    return %a, %b, %c, %d, %e
  )"),
            "%0 = full() {value=0} : f32[]\n"
            "%1 = full() {value=-0} : f32[]\n"
            "%2 = full() {value=0} : f64[]\n"
            "%3 = full() {value=0} : f32[2]\n"
            "return %0, %1, %0, %2, %3\n");
}

TEST(CommonSubexpressionEliminationTest, NaNParamsMergeOnlyWithTheSameBits) {
  ir::Graph graph = ir::parse_graph(R"(
    %a = full() {value=nan} : f64[]
    %b = full() {value=nan} : f64[]
    %c = full() {value=nan} : f64[]
    return %a, %b, %c
  )")
                        .graph;
  // Same NaN for %a and %b; %c gets another payload.
  const double other_nan =
      std::bit_cast<double>(std::bit_cast<uint64_t>(graph.nodes[0]->params[0].floating) ^ 1);
  ASSERT_TRUE(std::isnan(other_nan));
  graph.nodes[2]->params[0].floating = other_nan;

  const ir::Graph result = run_pass("cse", std::move(graph));

  ASSERT_EQ(result.nodes.size(), 2u);
  EXPECT_EQ(result.outputs[0], result.outputs[1]);
  EXPECT_NE(result.outputs[0], result.outputs[2]);
}

TEST(CommonSubexpressionEliminationTest, DataLeavesMergeOnlyWhenTheyShareABuffer) {
  ir::Graph graph = ir::parse_graph(R"(
    %a = data() : f32[3]
    %b = data() : f32[3]
    %c = data() : f32[3]
    %d = data() : f32[3]
    %e = data() : f32[3]
    %ea = exp(%a)  : f32[3]
    %eb = exp(%b) : f32[3]
    %ec = exp(%c) : f32[3]
    %ed = exp(%d) : f32[3]
    %ee = exp(%e) : f32[3]
    return %ea, %eb, %ec, %ed, %ee
  )")
                        .graph;
  const auto shared = memory::Buffer::allocate(float32, 3);
  graph.nodes[0]->buffer = shared;
  graph.nodes[1]->buffer = shared;
  graph.nodes[2]->buffer = memory::Buffer::allocate(float32, 3);
  // %d and %e have no buffer (as parsed): equal in every field, yet not the same value.

  const ir::Graph result = run_pass("cse", std::move(graph));

  EXPECT_EQ(ir::print_graph(result),
            "%0 = data() : f32[3]\n"
            "%1 = data() : f32[3]\n"
            "%2 = data() : f32[3]\n"
            "%3 = data() : f32[3]\n"
            "%4 = exp(%0) : f32[3]\n"
            "%5 = exp(%1) : f32[3]\n"
            "%6 = exp(%2) : f32[3]\n"
            "%7 = exp(%3) : f32[3]\n"
            "return %4, %4, %5, %6, %7\n");
  EXPECT_EQ(result.nodes[0]->buffer, shared);
}

TEST(CommonSubexpressionEliminationTest, RandomOpsMergeWhenSeedParamsAndShapeAreEqual) {
  expect_rewrite_keeps_values("cse", R"(
    %a = random_uniform() {seed=7, low=0, high=1} : f32[5]
    %b = random_uniform() {seed=7, low=0, high=1} : f32[5]
    %c = random_uniform() {seed=8, low=0, high=1} : f32[5]
    %d = random_uniform() {seed=7, low=0, high=2} : f32[5]
    %e = random_normal() {seed=7, mean=0, std=1} : f32[5]
    %f = random_normal() {seed=7, mean=0, std=1} : f32[5]
    return %a, %b, %c, %d, %e, %f
  )",
                              "%0 = random_uniform() {seed=7, low=0, high=1} : f32[5]\n"
                              "%1 = random_uniform() {seed=8, low=0, high=1} : f32[5]\n"
                              "%2 = random_uniform() {seed=7, low=0, high=2} : f32[5]\n"
                              "%3 = random_normal() {seed=7, mean=0, std=1} : f32[5]\n"
                              "return %0, %0, %1, %2, %3, %3\n");
}

TEST(CommonSubexpressionEliminationTest, NodesNoOutputReachesAreDropped) {
  EXPECT_EQ(rewrite("cse", R"(
    %a = data() : f32[2]
    %dead = exp(%a) : f32[2]
    %x = neg(%a) : f32[2]
    %y = neg(%a) : f32[2]
    return %x, %y
  )"),
            "%0 = data() : f32[2]\n"
            "%1 = neg(%0) : f32[2]\n"
            "return %1, %1\n");
}

/// Two identical chains of `length` nodes over one data leaf, alternating ops so that every
/// node of a chain is distinct, with both chain ends as outputs.
ir::Graph two_identical_chains(int length) {
  ir::Graph graph;
  auto leaf = std::make_shared<ir::Node>();
  leaf->op = ir::Op::Data;
  leaf->shape = {4};
  graph.nodes.push_back(leaf);
  for (int copy = 0; copy < 2; ++copy) {
    ir::NodePtr previous = leaf;
    for (int i = 0; i < length; ++i) {
      auto node = std::make_shared<ir::Node>();
      node->op = i % 3 == 0 ? ir::Op::Exp : (i % 3 == 1 ? ir::Op::Neg : ir::Op::Add);
      node->shape = {4};
      node->inputs = {previous};
      if (node->op == ir::Op::Add) node->inputs.push_back(leaf);
      graph.nodes.push_back(node);
      previous = node;
    }
    graph.outputs.push_back(previous);
  }
  return graph;
}

// Linear work, counted rather than timed (speed is tracked in benchmarks/): each node of the
// second chain is compared with its twin in the first, once its inputs are merged, instead of
// walking down both chains (about n^2 / 2 comparisons for chains of n).
TEST(CommonSubexpressionEliminationTest, HundredThousandNodesInLinearWork) {
  constexpr int kLength = 50'000;  // two chains: 100,001 nodes
  ir::Graph graph = two_identical_chains(kLength);
  PassContext context(std::move(graph));
  make_pass("cse")->run(context);

  ir::verify(context.graph);
  EXPECT_EQ(context.graph.nodes.size(), static_cast<size_t>(kLength + 1));
  EXPECT_EQ(context.graph.outputs[0], context.graph.outputs[1]);
  EXPECT_GE(context.node_comparisons, kLength) << "each duplicate is found by a comparison";
  EXPECT_LE(context.node_comparisons, 2 * kLength) << "more than two comparisons per duplicate";
}

}  // namespace
}  // namespace lz::passes
