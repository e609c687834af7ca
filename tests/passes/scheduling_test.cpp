// The "schedule" pass over hand-made fusion plans: launch order, levels, streams and waits.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/parser.h"
#include "lazuli/error.h"
#include "passes/pass.h"
#include "plan/fusion_plan.h"
#include "plan/schedule.h"
#include "plan_builder.h"

namespace lz::passes::test {

// A fusion plan whose kernel k computes the nodes at positions groups[k] of `graph`. Inputs and
// outputs follow plan::FusionPlan's definition: a kernel reads what its nodes use from outside, and
// writes out what another kernel reads or the graph returns.
plan::FusionPlan plan_of(const ir::Graph& graph, const std::vector<std::vector<int>>& groups) {
  std::unordered_map<const ir::Node*, int> kernel_of;
  for (int k = 0; k < static_cast<int>(groups.size()); ++k) {
    for (const int position : groups[k]) kernel_of[graph.nodes[position].get()] = k;
  }
  std::set<const ir::Node*> read_outside;
  for (const auto& node : graph.nodes) {
    for (const auto& input : node->inputs) {
      const auto consumer = kernel_of.find(node.get());
      const auto producer = kernel_of.find(input.get());
      if (consumer != kernel_of.end() && producer != kernel_of.end() &&
          consumer->second != producer->second) {
        read_outside.insert(input.get());
      }
    }
  }
  for (const auto& output : graph.outputs) read_outside.insert(output.get());
  plan::FusionPlan plan;
  for (int k = 0; k < static_cast<int>(groups.size()); ++k) {
    plan::Kernel kernel;
    kernel.id = k;
    for (const int position : groups[k]) {
      const ir::NodePtr& node = graph.nodes[position];
      kernel.nodes.push_back(node);
      for (const auto& input : node->inputs) {
        const auto producer = kernel_of.find(input.get());
        const bool outside = producer == kernel_of.end() || producer->second != k;
        if (outside &&
            std::find(kernel.inputs.begin(), kernel.inputs.end(), input) == kernel.inputs.end()) {
          kernel.inputs.push_back(input);
        }
      }
      if (read_outside.count(node.get())) kernel.outputs.push_back(node);
    }
    plan.kernels.push_back(std::move(kernel));
  }
  return plan;
}

PassContext run_schedule(const std::string& ir, const std::vector<std::vector<int>>& groups,
                         int streams) {
  ir::Graph graph = ir::parse_graph(ir).graph;
  auto plan = std::make_unique<plan::FusionPlan>(plan_of(graph, groups));
  PassOptions options;
  options.streams = streams;
  PassContext context(std::move(graph), options);
  context.fusion = std::move(plan);
  make_scheduling()->run(context);
  return context;
}

}  // namespace lz::passes::test

namespace lz::passes {
namespace {

using test::run_schedule;

std::vector<std::set<int>> producers_by_kernel(const plan::FusionPlan& plan) {
  std::unordered_map<const ir::Node*, int> writer;
  for (int k = 0; k < static_cast<int>(plan.kernels.size()); ++k) {
    for (const auto& output : plan.kernels[k].outputs) writer[output.get()] = k;
  }
  std::vector<std::set<int>> producers(plan.kernels.size());
  for (int k = 0; k < static_cast<int>(plan.kernels.size()); ++k) {
    for (const auto& input : plan.kernels[k].inputs) {
      if (writer.count(input.get())) producers[k].insert(writer[input.get()]);
    }
  }
  return producers;
}

// The kernels that the runtime's orderings (`before`: predecessors per kernel) put before any
// kernel of `start`, and those kernels themselves.
std::vector<bool> ordered_before(const std::vector<std::vector<int>>& before,
                                 std::vector<int> start) {
  std::vector<bool> seen(before.size(), false);
  while (!start.empty()) {
    const int other = start.back();
    start.pop_back();
    if (seen[other]) continue;
    seen[other] = true;
    start.insert(start.end(), before[other].begin(), before[other].end());
  }
  return seen;
}

// What every schedule must satisfy, checked from the plan alone: the order is a topological
// permutation, levels are longest producer chains, and the runtime's orderings (a stream's FIFO
// order plus the waits) make every producer finish before its consumers start.
void expect_valid_schedule(const plan::FusionPlan& plan, const plan::Schedule& schedule,
                           int streams) {
  const int count = static_cast<int>(plan.kernels.size());
  const auto producers = producers_by_kernel(plan);
  ASSERT_EQ(schedule.order.size(), static_cast<size_t>(count));
  ASSERT_EQ(schedule.level.size(), static_cast<size_t>(count));
  ASSERT_EQ(schedule.stream.size(), static_cast<size_t>(count));
  std::vector<int> position(count, -1);
  for (int i = 0; i < count; ++i) {
    ASSERT_GE(schedule.order[i], 0);
    ASSERT_LT(schedule.order[i], count);
    ASSERT_EQ(position[schedule.order[i]], -1) << "kernel " << schedule.order[i] << " twice";
    position[schedule.order[i]] = i;
  }
  // Predecessors in the runtime's sense: the previous kernel on the same stream, and waits.
  std::vector<std::vector<int>> before(count);
  std::vector<int> last_on_stream(streams, -1);
  for (const int kernel : schedule.order) {
    const int s = schedule.stream[kernel];
    ASSERT_GE(s, 0);
    ASSERT_LT(s, streams);
    if (last_on_stream[s] >= 0) before[kernel].push_back(last_on_stream[s]);
    last_on_stream[s] = kernel;
  }
  for (const auto& wait : schedule.waits) {
    EXPECT_NE(schedule.stream[wait.kernel], schedule.stream[wait.producer])
        << "kernel " << wait.kernel << " waits for kernel " << wait.producer << " on its stream";
    EXPECT_LT(position[wait.producer], position[wait.kernel]);
    before[wait.kernel].push_back(wait.producer);
  }
  for (int k = 0; k < count; ++k) {
    int expected_level = 0;
    for (const int producer : producers[k]) {
      EXPECT_LT(position[producer], position[k]) << "kernel " << k << " before its producer";
      expected_level = std::max(expected_level, schedule.level[producer] + 1);
      EXPECT_TRUE(ordered_before(before, before[k])[producer])
          << "nothing makes kernel " << k << " wait for kernel " << producer;
    }
    EXPECT_EQ(schedule.level[k], expected_level) << "kernel " << k;
  }
  // No wait is implied by the other orderings: without it, its producer is not ordered first.
  for (const auto& wait : schedule.waits) {
    std::vector<int> others;
    for (const int other : before[wait.kernel]) {
      if (other != wait.producer) others.push_back(other);
    }
    EXPECT_FALSE(ordered_before(before, others)[wait.producer])
        << "kernel " << wait.kernel << "'s wait for kernel " << wait.producer
        << " is implied by other orderings";
  }
}

// Independent x -> a -> b and y -> c -> d.
constexpr const char* kTwoChains = R"(
  %x = data() : f32[8]
  %y = data() : f32[8]
  %a = exp(%x) : f32[8]
  %b = sin(%a) : f32[8]
  %c = cos(%y) : f32[8]
  %d = tanh(%c) : f32[8]
  return %b, %d
)";

TEST(SchedulingTest, IndependentSubgraphsGetDifferentStreams) {
  const PassContext context = run_schedule(kTwoChains, {{2}, {3}, {4}, {5}});
  const plan::Schedule& schedule = *context.schedule;
  expect_valid_schedule(*context.fusion, schedule, 2);
  EXPECT_EQ(schedule.level, (std::vector<int>{0, 1, 0, 1}));
  EXPECT_NE(schedule.stream[0], schedule.stream[2]);
  // Each chain stays on its stream, so nothing waits.
  EXPECT_EQ(schedule.stream[0], schedule.stream[1]);
  EXPECT_EQ(schedule.stream[2], schedule.stream[3]);
  EXPECT_TRUE(schedule.waits.empty());
}

TEST(SchedulingTest, DependentKernelsAreOrderedEvenWhenListedConsumerFirst) {
  // Kernels 0 and 2 consume kernels 1 and 3. plan::FusionPlan promises producers first, but the
  // order comes from the dependencies, not from the listing.
  const PassContext context = run_schedule(kTwoChains, {{3}, {2}, {5}, {4}});
  const plan::Schedule& schedule = *context.schedule;
  expect_valid_schedule(*context.fusion, schedule, 2);
  EXPECT_EQ(schedule.order, (std::vector<int>{1, 3, 0, 2}));
  EXPECT_EQ(schedule.level, (std::vector<int>{1, 0, 1, 0}));
}

// The diamond, kernel k computing %(k+1):
//
//        A (0)          level 0
//       /     \.
//    B (1)   C (2)      level 1: independent, so on different streams
//       \     /
//        D (3)          level 2: waits for whichever of B and C is not on its stream
constexpr const char* kDiamond = R"(
  %0 = data() : f32[16]
  %1 = exp(%0) : f32[16]
  %2 = sin(%1) : f32[16]
  %3 = cos(%1) : f32[16]
  %4 = add(%2, %3) : f32[16]
  return %4
)";

TEST(SchedulingTest, DiamondLevelsStreamsAndWaits) {
  const PassContext context = run_schedule(kDiamond, {{1}, {2}, {3}, {4}});
  const plan::Schedule& schedule = *context.schedule;
  expect_valid_schedule(*context.fusion, schedule, 2);
  EXPECT_EQ(schedule.order, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(schedule.level, (std::vector<int>{0, 1, 1, 2}));
  EXPECT_NE(schedule.stream[1], schedule.stream[2]);
  // One of B and C shares A's stream; the other waits for A. D waits for the one not on its
  // stream, and for nothing else.
  const int b_or_c_with_a = schedule.stream[1] == schedule.stream[0] ? 1 : 2;
  const int other = 3 - b_or_c_with_a;
  const int d_waits_for = schedule.stream[3] == schedule.stream[1] ? 2 : 1;
  ASSERT_EQ(schedule.waits.size(), 2u);
  EXPECT_EQ(schedule.waits[0].kernel, other);
  EXPECT_EQ(schedule.waits[0].producer, 0);
  EXPECT_EQ(schedule.waits[1].kernel, 3);
  EXPECT_EQ(schedule.waits[1].producer, d_waits_for);
}

TEST(SchedulingTest, PrintsOneLinePerKernelInLaunchOrder) {
  const PassContext context = run_schedule(kDiamond, {{1}, {2}, {3}, {4}});
  // D has one producer on each stream; it goes to the less loaded stream 1.
  EXPECT_EQ(print_schedule(*context.schedule),
            "kernel 0: level 0, stream 0\n"
            "kernel 1: level 1, stream 0\n"
            "kernel 2: level 1, stream 1, waits for kernel 0 (stream 0)\n"
            "kernel 3: level 2, stream 1, waits for kernel 1 (stream 0)\n");
}

TEST(SchedulingTest, ChainStaysOnOneStreamWithoutWaits) {
  const PassContext context = run_schedule(R"(
    %0 = data() : f32[4]
    %1 = exp(%0) : f32[4]
    %2 = sin(%1) : f32[4]
    %3 = cos(%2) : f32[4]
    %4 = tanh(%3) : f32[4]
    %5 = abs(%4) : f32[4]
    return %5
  )",
                                           {{1}, {2}, {3}, {4}, {5}}, 4);
  const plan::Schedule& schedule = *context.schedule;
  expect_valid_schedule(*context.fusion, schedule, 4);
  EXPECT_EQ(schedule.order, (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(schedule.level, (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(schedule.stream, (std::vector<int>{0, 0, 0, 0, 0}));
  EXPECT_TRUE(schedule.waits.empty());
}

// Levels are longest paths, not shortest: F reads D (level 1) and E (level 2), so it is level 3.
//
//     A (0)   B (1)       level 0
//     |   \   /
//     C (2) D (3)         level 1
//      \   /  |
//      E (4)  |           level 2
//         \   |
//          F (5)          level 3
TEST(SchedulingTest, LevelsAreLongestPathsInAHandCheckedDag) {
  const PassContext context = run_schedule(R"(
    %x = data() : f32[8]
    %y = data() : f32[8]
    %a = exp(%x) : f32[8]
    %b = exp(%y) : f32[8]
    %c = sin(%a) : f32[8]
    %d = add(%a, %b) : f32[8]
    %e = mul(%c, %d) : f32[8]
    %f = add(%e, %d) : f32[8]
    return %f
  )",
                                           {{2}, {3}, {4}, {5}, {6}, {7}});
  const plan::Schedule& schedule = *context.schedule;
  expect_valid_schedule(*context.fusion, schedule, 2);
  EXPECT_EQ(schedule.level, (std::vector<int>{0, 0, 1, 1, 2, 3}));
  EXPECT_EQ(schedule.order, (std::vector<int>{0, 1, 2, 3, 4, 5}));
  EXPECT_NE(schedule.stream[0], schedule.stream[1]);
  EXPECT_NE(schedule.stream[2], schedule.stream[3]);
}

TEST(SchedulingTest, FusedKernelsWithSeveralNodesAndOutputs) {
  // Kernel 0 computes %a and %b and writes out both (kernels 1 and 2 read them); kernels 1 and 2
  // are independent.
  const PassContext context = run_schedule(R"(
    %x = data() : f32[8]
    %a = exp(%x) : f32[8]
    %b = neg(%a) : f32[8]
    %c = sin(%a) : f32[8]
    %d = cos(%b) : f32[8]
    %e = sqrt(%d) : f32[8]
    return %c, %e
  )",
                                           {{1, 2}, {3}, {4, 5}});
  const plan::Schedule& schedule = *context.schedule;
  ASSERT_EQ(context.fusion->kernels[0].outputs.size(), 2u);
  expect_valid_schedule(*context.fusion, schedule, 2);
  EXPECT_EQ(schedule.level, (std::vector<int>{0, 1, 1}));
  EXPECT_NE(schedule.stream[1], schedule.stream[2]);
}

TEST(SchedulingTest, MoreIndependentKernelsThanStreamsShareStreams) {
  const std::string ir = R"(
    %x = data() : f32[8]
    %a = exp(%x) : f32[8]
    %b = sin(%x) : f32[8]
    %c = cos(%x) : f32[8]
    return %a, %b, %c
  )";
  const PassContext two = run_schedule(ir, {{1}, {2}, {3}}, 2);
  expect_valid_schedule(*two.fusion, *two.schedule, 2);
  EXPECT_EQ(std::set<int>(two.schedule->stream.begin(), two.schedule->stream.end()),
            (std::set<int>{0, 1}));
  const PassContext three = run_schedule(ir, {{1}, {2}, {3}}, 3);
  EXPECT_EQ(std::set<int>(three.schedule->stream.begin(), three.schedule->stream.end()),
            (std::set<int>{0, 1, 2}));
  const PassContext one = run_schedule(ir, {{1}, {2}, {3}}, 1);
  EXPECT_EQ(one.schedule->stream, (std::vector<int>{0, 0, 0}));
  EXPECT_TRUE(one.schedule->waits.empty());
}

// Kernel 5 reads A and B (stream 0) and P, Q, R (stream 1), so it runs on stream 1 after R. Of
// its producers on stream 0 it waits only for B: A ran before B on that stream.
//
//   stream 0:  A (0) -> B (2) ------------.
//   stream 1:  P (1) -> Q (3) -> R (4) -> kernel 5, which also reads A, P and Q
TEST(SchedulingTest, WaitsImpliedByStreamOrderAreLeftOut) {
  const PassContext context = run_schedule(R"(
    %x = data() : f32[8]
    %y = data() : f32[8]
    %a = exp(%x) : f32[8]
    %p = exp(%y) : f32[8]
    %b = sin(%a) : f32[8]
    %q = sin(%p) : f32[8]
    %r = cos(%q) : f32[8]
    %s = add(%a, %b) : f32[8]
    %t = add(%s, %r) : f32[8]
    %u = add(%t, %q) : f32[8]
    %c = add(%u, %p) : f32[8]
    return %c
  )",
                                           {{2}, {3}, {4}, {5}, {6}, {7, 8, 9, 10}});
  const plan::Schedule& schedule = *context.schedule;
  expect_valid_schedule(*context.fusion, schedule, 2);
  EXPECT_EQ(schedule.level, (std::vector<int>{0, 0, 1, 1, 2, 3}));
  EXPECT_EQ(schedule.stream, (std::vector<int>{0, 1, 0, 1, 1, 1}));
  ASSERT_EQ(schedule.waits.size(), 1u);
  EXPECT_EQ(schedule.waits[0].kernel, 5);
  EXPECT_EQ(schedule.waits[0].producer, 2);
}

TEST(SchedulingTest, MissingFusionPlanIsAClearError) {
  PassContext context(ir::parse_graph("%0 = data() : f32[2]\nreturn %0\n").graph);
  try {
    make_scheduling()->run(context);
    FAIL() << "expected lz::Error";
  } catch (const Error& error) {
    EXPECT_STREQ(error.what(), "[schedule] needs the kernels of the fuse pass; run fuse first");
  }
}

TEST(SchedulingTest, CycleIsAnError) {
  ir::Graph graph = ir::parse_graph(R"(
    %0 = data() : f32[4]
    %1 = exp(%0) : f32[4]
    %2 = sin(%1) : f32[4]
    return %2
  )")
                        .graph;
  // Kernel 0 computes %1 but claims to read %2, which kernel 1 computes from %1.
  auto plan = std::make_unique<plan::FusionPlan>();
  plan->kernels.push_back(
      {0, {graph.nodes[1]}, {graph.nodes[0], graph.nodes[2]}, {graph.nodes[1]}, nullptr});
  plan->kernels.push_back({1, {graph.nodes[2]}, {graph.nodes[1]}, {graph.nodes[2]}, nullptr});
  PassContext context(std::move(graph));
  context.fusion = std::move(plan);
  try {
    make_scheduling()->run(context);
    FAIL() << "expected lz::Error";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("[schedule] the kernels' dependencies form a cycle"),
              std::string::npos)
        << error.what();
  }
}

TEST(SchedulingTest, ReadingAValueNoKernelWritesOutIsAnError) {
  ir::Graph graph = ir::parse_graph(R"(
    %0 = data() : f32[4]
    %1 = exp(%0) : f32[4]
    %2 = sin(%1) : f32[4]
    %3 = cos(%2) : f32[4]
    return %3
  )")
                        .graph;
  // Kernel 0 computes %1 and %2 but writes out neither, yet kernel 1 reads %2.
  auto plan = std::make_unique<plan::FusionPlan>();
  plan->kernels.push_back({0, {graph.nodes[1], graph.nodes[2]}, {graph.nodes[0]}, {}, nullptr});
  plan->kernels.push_back({1, {graph.nodes[3]}, {graph.nodes[2]}, {graph.nodes[3]}, nullptr});
  PassContext context(std::move(graph));
  context.fusion = std::move(plan);
  try {
    make_scheduling()->run(context);
    FAIL() << "expected lz::Error";
  } catch (const Error& error) {
    EXPECT_STREQ(error.what(),
                 "[schedule] kernel 1 reads %2 (sin), which kernel 0 computes but does not write "
                 "out");
  }
}

TEST(SchedulingTest, StreamsMustBePositive) {
  EXPECT_THROW(run_schedule(kDiamond, {{1}, {2}, {3}, {4}}, 0), Error);
}

TEST(SchedulingTest, EmptyPlanIsAnEmptySchedule) {
  const PassContext context = run_schedule("%0 = data() : f32[2]\nreturn %0\n", {});
  EXPECT_TRUE(context.schedule->order.empty());
  EXPECT_EQ(print_schedule(*context.schedule), "");
}

}  // namespace
}  // namespace lz::passes
