// Graph::collect's walk: every node once, inputs first, evaluated nodes as leaves, and the
// wiring it fills in as it goes equal to the one looked up node by node afterwards.
#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <thread>
#include <vector>

#include "ir/graph.h"
#include "memory/buffer.h"
#include "tests/ir/graph_builder.h"

namespace lz::ir {
namespace {

/// A random graph over a few leaves: binary ops and wheres reading earlier nodes, so that
/// nodes are shared, and a few nodes computed already (data leaves holding a buffer).
std::vector<NodePtr> random_nodes(std::mt19937& random) {
  std::vector<NodePtr> nodes = {test::data(float32, {4}), test::data(float32, {4}),
                                test::full(float32, {4}, ScalarParam::of(2.0))};
  const auto any = [&] { return nodes[random() % nodes.size()]; };
  for (int i = 0; i < 40; ++i) {
    NodePtr node;
    if (random() % 5 == 0) {
      node =
          test::make_node(Op::Where, {test::make_node(Op::Greater, {any(), any()}), any(), any()});
    } else {
      node = test::make_node(random() % 2 == 0 ? Op::Add : Op::Mul, {any(), any()});
    }
    if (random() % 8 == 0) node->become_data(memory::Buffer::allocate(float32, 4));
    nodes.push_back(node);
  }
  return nodes;
}

TEST(GraphTest, CollectedWiringEqualsTheOneLookedUpAfterwards) {
  std::mt19937 random(11);
  for (int round = 0; round < 50; ++round) {
    const std::vector<NodePtr> nodes = random_nodes(random);
    // Outputs in any order, one of them twice.
    std::vector<NodePtr> outputs = {nodes.back(), nodes[nodes.size() / 2], nodes.back(),
                                    nodes[random() % nodes.size()]};
    Wiring wiring;
    const Graph graph = Graph::collect(outputs, &wiring, round % 2 == 0 ? 0 : 64);
    const Wiring expected = Wiring::of(graph);
    EXPECT_EQ(wiring.input_begin, expected.input_begin) << "round " << round;
    EXPECT_EQ(wiring.inputs, expected.inputs) << "round " << round;
    EXPECT_EQ(wiring.outputs, expected.outputs) << "round " << round;

    const NodePositions index = graph.index();
    ASSERT_EQ(index.size(), graph.nodes.size()) << "each node once";
    for (size_t i = 0; i < graph.nodes.size(); ++i) {
      const Node& node = *graph.nodes[i];
      if (node.is_evaluated()) {
        EXPECT_TRUE(wiring.inputs_of(i).empty());
        continue;
      }
      ASSERT_EQ(wiring.inputs_of(i).size(), node.inputs.size());
      for (size_t k = 0; k < node.inputs.size(); ++k) {
        const int32_t input = wiring.inputs_of(i)[k];
        EXPECT_LT(input, static_cast<int32_t>(i)) << "inputs come first";
        EXPECT_EQ(graph.nodes[input], node.inputs[k]);
      }
    }
    for (size_t k = 0; k < outputs.size(); ++k) {
      EXPECT_EQ(graph.nodes[wiring.outputs[k]], outputs[k]);
    }
  }
}

TEST(GraphTest, WalksOfSharedNodesFromSeveralThreadsEachSeeEveryNodeOnce) {
  std::mt19937 random(5);
  const std::vector<NodePtr> nodes = random_nodes(random);
  const std::vector<NodePtr> outputs = {nodes.back(), nodes[nodes.size() / 2]};
  Wiring expected_wiring;
  const size_t expected_size = Graph::collect(outputs, &expected_wiring).nodes.size();
  std::vector<std::thread> threads;
  std::atomic<int> mismatches{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 200; ++i) {
        Wiring wiring;
        const Graph graph = Graph::collect(outputs, &wiring);
        if (graph.nodes.size() != expected_size || wiring.inputs != expected_wiring.inputs) {
          ++mismatches;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(mismatches.load(), 0);
}

}  // namespace
}  // namespace lz::ir
