#include <gtest/gtest.h>

#include <functional>
#include <source_location>

#include "graph_builder.h"
#include "ir/hash.h"
#include "memory/buffer.h"

namespace lz::ir {
namespace {

using test::data;
using test::graph_of;
using test::make_node;

// sum(exp(x) * full, axes) with every value-like detail given by the caller.
struct Variant {
  DType dtype = float32;
  Shape shape = {3, 4};
  double fill = 2;
  Op unary = Op::Exp;
  std::vector<int64_t> axes = {1};
  bool keepdims = false;
};

Graph build(const Variant& variant) {
  const NodePtr x = data(variant.dtype, variant.shape);
  const NodePtr fill = test::full(variant.dtype, {}, ScalarParam::of(variant.fill));
  const NodePtr product = make_node(Op::Mul, {make_node(variant.unary, {x}), fill});
  return graph_of({test::reduce(Op::Sum, product, variant.axes, variant.keepdims)});
}

uint64_t hash_of(const Variant& variant) { return structural_hash(build(variant)); }

TEST(HashTest, RebuildingTheSameStructureGivesTheSameHash) { EXPECT_EQ(hash_of({}), hash_of({})); }

TEST(HashTest, ScalarValuesDoNotChangeTheHash) {
  EXPECT_EQ(hash_of({.fill = 2}), hash_of({.fill = -0.125}));
}

TEST(HashTest, SeedsAndDistributionParametersDoNotChangeTheHash) {
  const auto random = [](uint64_t seed, double mean, double deviation) {
    return structural_hash(graph_of({test::leaf(Op::RandomNormal, float32, {4}, [&](Node& node) {
      node.seed = seed;
      node.params[0] = ScalarParam::of(mean);
      node.params[1] = ScalarParam::of(deviation);
    })}));
  };
  EXPECT_EQ(random(1, 0, 1), random(99, 5, 0.5));
}

TEST(HashTest, SourceLocationsAndBuffersDoNotChangeTheHash) {
  const Graph plain = build({});
  const Graph decorated = build({});
  for (const NodePtr& node : decorated.nodes) node->location = std::source_location::current();
  decorated.nodes[0]->buffer = memory::Buffer::allocate(float32, 12);
  EXPECT_EQ(structural_hash(plain), structural_hash(decorated));
}

TEST(HashTest, OpDtypeShapeAxesAndKeepdimsChangeTheHash) {
  const uint64_t base = hash_of({});
  EXPECT_NE(base, hash_of({.unary = Op::Log}));
  EXPECT_NE(base, hash_of({.dtype = float64}));
  EXPECT_NE(base, hash_of({.shape = {4, 3}}));
  EXPECT_NE(base, hash_of({.shape = {3, 4, 1}, .axes = {1}}));
  EXPECT_NE(base, hash_of({.axes = {0}}));
  EXPECT_NE(base, hash_of({.keepdims = true}));
}

TEST(HashTest, PermutationAndSliceAttributesChangeTheHash) {
  const auto transposed = [](std::vector<int64_t> perm) {
    return structural_hash(graph_of({make_node(Op::Transpose, {data(float32, {2, 2, 2})},
                                               [&](Node& node) { node.axes = perm; })}));
  };
  EXPECT_NE(transposed({1, 0, 2}), transposed({0, 2, 1}));
  const auto sliced = [](std::vector<int64_t> starts, std::vector<int64_t> steps) {
    return structural_hash(graph_of({test::slice(data(float32, {6}), starts, steps, {2})}));
  };
  EXPECT_NE(sliced({0}, {2}), sliced({1}, {2}));
  EXPECT_NE(sliced({0}, {2}), sliced({0}, {3}));
}

TEST(HashTest, WiringChangesTheHash) {
  const NodePtr a = data(float32, {3});
  const NodePtr b = data(float32, {3});
  // Same nodes in the same order; only which leaf feeds which operand differs.
  const auto difference_of = [&](const NodePtr& left, const NodePtr& right) {
    Graph graph;
    const NodePtr difference = make_node(Op::Sub, {left, right});
    graph.nodes = {a, b, difference};
    graph.outputs = {difference};
    return structural_hash(graph);
  };
  EXPECT_EQ(difference_of(a, b), difference_of(a, b));
  EXPECT_NE(difference_of(a, b), difference_of(b, a));
  EXPECT_NE(difference_of(a, b), difference_of(a, a));
}

TEST(HashTest, WhichNodesAreOutputsChangesTheHash) {
  const NodePtr x = data(float32, {3});
  const NodePtr y = make_node(Op::Exp, {x});
  const NodePtr z = make_node(Op::Log, {y});
  Graph one_output = graph_of({z});
  Graph two_outputs = graph_of({z});
  two_outputs.outputs.push_back(y);
  Graph reordered = graph_of({z});
  reordered.outputs = {y, z};
  EXPECT_NE(structural_hash(one_output), structural_hash(two_outputs));
  EXPECT_NE(structural_hash(two_outputs), structural_hash(reordered));
}

}  // namespace
}  // namespace lz::ir
