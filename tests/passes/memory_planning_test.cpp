// The "memplan" pass over hand-made fusion plans and their schedules: buffer reuse, in-place
// updates, and the invariant that values sharing a buffer never live at the same time.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/parser.h"
#include "lazuli/error.h"
#include "passes/pass.h"
#include "plan/fusion_plan.h"
#include "plan/memory_plan.h"
#include "plan/schedule.h"
#include "plan_builder.h"

namespace lz::passes {
namespace {

int64_t bytes_of(const ir::Node& node) { return node.size() * dtype_size(node.dtype); }

// Everything a memory plan must satisfy, checked from the plan, the schedule and the graph:
// - exactly the intermediate kernel outputs are planned (graph outputs and data leaves never);
// - each buffer has the 64-byte size class of every value in it, and the totals add up;
// - values sharing a buffer have disjoint lifetimes over the launch order (an in-place value
//   is born in the kernel where the previous one dies, and that kernel reads it), and every
//   kernel touching the earlier value is ordered before the later value's producer by the
//   runtime's orderings (stream order and waits), so that streams running in parallel cannot
//   see the buffer change under them.
void expect_valid_memory_plan(const PassContext& context) {
  ASSERT_TRUE(context.fusion && context.schedule && context.memory);
  const plan::FusionPlan& plan = *context.fusion;
  const plan::Schedule& schedule = *context.schedule;
  const plan::MemoryPlan& memory = *context.memory;
  const int count = static_cast<int>(plan.kernels.size());

  std::unordered_set<const ir::Node*> graph_outputs;
  for (const auto& output : context.graph.outputs) graph_outputs.insert(output.get());
  std::vector<int> position(count);
  for (int i = 0; i < count; ++i) position[schedule.order[i]] = i;
  std::unordered_map<const ir::Node*, int> producer;
  std::unordered_map<const ir::Node*, std::vector<int>> readers;
  for (int k = 0; k < count; ++k) {
    for (const auto& output : plan.kernels[k].outputs) producer[output.get()] = k;
    for (const auto& input : plan.kernels[k].inputs) readers[input.get()].push_back(k);
  }
  size_t intermediates = 0;
  for (const auto& [node, kernel] : producer) intermediates += !graph_outputs.count(node);
  EXPECT_EQ(memory.assignments.size(), intermediates);

  std::unordered_set<const ir::Node*> assigned;
  for (const auto& assignment : memory.assignments) {
    const ir::Node* node = assignment.value.get();
    EXPECT_TRUE(assigned.insert(node).second) << "a value is assigned twice";
    EXPECT_FALSE(graph_outputs.count(node)) << "a graph output is planned";
    EXPECT_NE(node->op, ir::Op::Data) << "a data leaf is planned";
    ASSERT_TRUE(producer.count(node)) << "a value no kernel writes out is planned";
    ASSERT_GE(assignment.buffer, 0);
    ASSERT_LT(assignment.buffer, static_cast<int>(memory.buffer_bytes.size()));
    EXPECT_EQ(memory.buffer_bytes[assignment.buffer], (bytes_of(*node) + 63) / 64 * 64);
  }
  int64_t planned = 0;
  for (const int64_t bytes : memory.buffer_bytes) planned += bytes;
  EXPECT_EQ(memory.planned_bytes, planned);
  EXPECT_LE(memory.planned_bytes, memory.unplanned_bytes);

  // The runtime's orderings: the previous kernel on the same stream, and the waits.
  std::vector<std::vector<int>> before(count);
  std::unordered_map<int, int> last_on_stream;
  for (const int kernel : schedule.order) {
    const int stream = schedule.stream[kernel];
    if (last_on_stream.count(stream)) before[kernel].push_back(last_on_stream[stream]);
    last_on_stream[stream] = kernel;
  }
  for (const auto& wait : schedule.waits) before[wait.kernel].push_back(wait.producer);
  const auto ordered_before = [&](int first, int then) {
    std::vector<bool> seen(count, false);
    std::vector<int> stack{then};
    while (!stack.empty()) {
      const int other = stack.back();
      stack.pop_back();
      if (other == first) return true;
      if (seen[other]) continue;
      seen[other] = true;
      stack.insert(stack.end(), before[other].begin(), before[other].end());
    }
    return false;
  };

  for (const auto& earlier : memory.assignments) {
    for (const auto& later : memory.assignments) {
      if (&earlier == &later || earlier.buffer != later.buffer) continue;
      const int earlier_producer = producer[earlier.value.get()];
      const int later_producer = producer[later.value.get()];
      if (position[earlier_producer] > position[later_producer]) continue;  // the other pair
      int death = position[earlier_producer];
      for (const int reader : readers[earlier.value.get()]) {
        death = std::max(death, position[reader]);
        EXPECT_TRUE(ordered_before(reader, later_producer))
            << "kernel " << later_producer << " may overwrite buffer " << later.buffer
            << " while kernel " << reader << " still reads it";
      }
      const int birth = position[later_producer];
      const auto& later_readers = readers[earlier.value.get()];
      const bool in_place_here = later.in_place && death == birth &&
                                 std::find(later_readers.begin(), later_readers.end(),
                                           later_producer) != later_readers.end();
      EXPECT_TRUE(death < birth || in_place_here)
          << "values in buffer " << later.buffer << " live at once (launch positions "
          << position[earlier_producer] << ".." << death << " and from " << birth << ")";
    }
  }
}

// Schedules the plan of `groups` over `streams` streams, then plans memory.
PassContext run_memory_plan(const std::string& ir, const std::vector<std::vector<int>>& groups,
                            int streams = 2) {
  PassContext context = test::run_schedule(ir, groups, streams);
  make_memory_planning()->run(context);
  expect_valid_memory_plan(context);
  return context;
}

// By graph position: the buffer of each planned value (-1 for values not planned).
std::vector<int> buffers_by_node(const PassContext& context) {
  const auto positions = context.graph.index();
  std::vector<int> buffers(context.graph.nodes.size(), -1);
  for (const auto& assignment : context.memory->assignments) {
    buffers[positions.at(assignment.value.get())] = assignment.buffer;
  }
  return buffers;
}

TEST(MemoryPlanningTest, ChainOfFiveElementwiseIntermediatesUpdatesOneBufferInPlace) {
  const PassContext context = run_memory_plan(R"(
    %0 = data() : f32[16]
    %1 = exp(%0) : f32[16]
    %2 = sin(%1) : f32[16]
    %3 = cos(%2) : f32[16]
    %4 = tanh(%3) : f32[16]
    %5 = abs(%4) : f32[16]
    %6 = neg(%5) : f32[16]
    return %6
  )",
                                              {{1}, {2}, {3}, {4}, {5}, {6}});
  const plan::MemoryPlan& memory = *context.memory;
  EXPECT_EQ(memory.buffer_bytes, (std::vector<int64_t>{64}));
  ASSERT_EQ(memory.assignments.size(), 5u);
  for (size_t i = 0; i < 5; ++i) EXPECT_EQ(memory.assignments[i].in_place, i > 0) << i;
  EXPECT_EQ(memory.planned_bytes, 64);
  EXPECT_EQ(memory.unplanned_bytes, 5 * 64);
}

TEST(MemoryPlanningTest, ChainOfFiveTransposesPingPongsBetweenTwoBuffers) {
  // A transpose reads other elements than the one it writes, so it can never write in place.
  const PassContext context = run_memory_plan(R"(
    %0 = data() : f32[4,4]
    %1 = transpose(%0) {perm=[1,0]} : f32[4,4]
    %2 = transpose(%1) {perm=[1,0]} : f32[4,4]
    %3 = transpose(%2) {perm=[1,0]} : f32[4,4]
    %4 = transpose(%3) {perm=[1,0]} : f32[4,4]
    %5 = transpose(%4) {perm=[1,0]} : f32[4,4]
    %6 = neg(%5) : f32[4,4]
    return %6
  )",
                                              {{1}, {2}, {3}, {4}, {5}, {6}});
  const plan::MemoryPlan& memory = *context.memory;
  EXPECT_EQ(memory.buffer_bytes, (std::vector<int64_t>{64, 64}));
  EXPECT_EQ(buffers_by_node(context), (std::vector<int>{-1, 0, 1, 0, 1, 0, -1}));
  for (const auto& assignment : memory.assignments) EXPECT_FALSE(assignment.in_place);
  EXPECT_EQ(memory.planned_bytes, 128);
  EXPECT_EQ(memory.unplanned_bytes, 320);
}

TEST(MemoryPlanningTest, GraphOutputsAndDataLeavesAreNeverPlanned) {
  // %2 is returned and read by kernel 2: it outlives the evaluation, so %3 cannot be written
  // over it; %3 reuses %1's buffer instead, freed after kernel 1.
  const PassContext context = run_memory_plan(R"(
    %0 = data() : f32[16]
    %1 = exp(%0) : f32[16]
    %2 = sin(%1) : f32[16]
    %3 = cos(%2) : f32[16]
    %4 = tanh(%3) : f32[16]
    return %2, %4
  )",
                                              {{1}, {2}, {3}, {4}});
  EXPECT_EQ(buffers_by_node(context), (std::vector<int>{-1, 0, -1, 0, -1}));
  for (const auto& assignment : context.memory->assignments) {
    EXPECT_FALSE(assignment.in_place);
  }
}

TEST(MemoryPlanningTest, NoInPlaceUpdateWhenTheKernelReducesTheInput) {
  // Kernel 1 computes %2 = sum(%1) and %3 = %1 - %2: writing %3 over %1 would change elements
  // the sum has not read yet.
  const PassContext context = run_memory_plan(R"(
    %0 = data() : f32[4,4]
    %1 = exp(%0) : f32[4,4]
    %2 = sum(%1) {axes=[1], keepdims=true} : f32[4,1]
    %3 = sub(%1, %2) : f32[4,4]
    %4 = exp(%3) : f32[4,4]
    return %4
  )",
                                              {{1}, {2, 3}, {4}});
  EXPECT_EQ(buffers_by_node(context), (std::vector<int>{-1, 0, -1, 1, -1}));
  for (const auto& assignment : context.memory->assignments) {
    EXPECT_FALSE(assignment.in_place);
  }
}

TEST(MemoryPlanningTest, InPlaceUpdateThroughBroadcastingElementwiseOps) {
  // %3 = (%1 * %w) + 1 reads element i of %1 only to write element i: it may overwrite %1.
  const PassContext context = run_memory_plan(R"(
    %0 = data() : f32[4,4]
    %w = data() : f32[4]
    %1 = exp(%0) : f32[4,4]
    %2 = mul(%1, %w) : f32[4,4]
    %one = full() {value=1} : f32[]
    %3 = add(%2, %one) : f32[4,4]
    %4 = transpose(%3) {perm=[1,0]} : f32[4,4]
    return %4
  )",
                                              {{2}, {3, 4, 5}, {6}});
  ASSERT_EQ(context.memory->assignments.size(), 2u);
  EXPECT_EQ(context.memory->assignments[1].value, context.graph.nodes[5]);
  EXPECT_TRUE(context.memory->assignments[1].in_place);
  EXPECT_EQ(context.memory->buffer_bytes.size(), 1u);
}

// The diamond A -> B, A -> C, B + C -> D, kernel k computing %(k+1). Over two streams B (stream 0)
// and C (stream 1) run at the same time, so C must not overwrite A's output while B reads it;
// over one stream B has finished when C starts, and C updates A's output in place.
constexpr const char* kDiamond = R"(
  %0 = data() : f32[16]
  %1 = exp(%0) : f32[16]
  %2 = sin(%1) : f32[16]
  %3 = cos(%1) : f32[16]
  %4 = add(%2, %3) : f32[16]
  return %4
)";

TEST(MemoryPlanningTest, InPlaceUpdateWaitsForReadersOnOtherStreams) {
  const PassContext parallel = run_memory_plan(kDiamond, {{1}, {2}, {3}, {4}}, 2);
  ASSERT_NE(parallel.schedule->stream[1], parallel.schedule->stream[2]);
  EXPECT_EQ(buffers_by_node(parallel), (std::vector<int>{-1, 0, 1, 2, -1}));
  for (const auto& assignment : parallel.memory->assignments) EXPECT_FALSE(assignment.in_place);

  const PassContext serial = run_memory_plan(kDiamond, {{1}, {2}, {3}, {4}}, 1);
  EXPECT_EQ(buffers_by_node(serial), (std::vector<int>{-1, 0, 1, 0, -1}));
  EXPECT_TRUE(serial.memory->assignments.back().in_place);
}

TEST(MemoryPlanningTest, ReuseWaitsForReadersOnOtherStreams) {
  // Two chains of transposes, one per stream:
  //   stream 0: %a (kernel 0) -> %b (kernel 2) -> %o (kernel 4, returned)
  //   stream 1: %p (kernel 1) -> %q (kernel 3) -> %r (kernel 5) -> %z (kernel 6, returned)
  // %a's buffer is free in launch order when %q and %r are written, but nothing orders stream
  // 0's kernels before stream 1's: %q gets a new buffer and %r reuses %p's, not %a's.
  const PassContext context = run_memory_plan(R"(
    %x = data() : f32[4,4]
    %y = data() : f32[4,4]
    %a = transpose(%x) {perm=[1,0]} : f32[4,4]
    %p = transpose(%y) {perm=[1,0]} : f32[4,4]
    %b = transpose(%a) {perm=[1,0]} : f32[4,4]
    %q = transpose(%p) {perm=[1,0]} : f32[4,4]
    %o = neg(%b) : f32[4,4]
    %r = transpose(%q) {perm=[1,0]} : f32[4,4]
    %z = neg(%r) : f32[4,4]
    return %o, %z
  )",
                                              {{2}, {3}, {4}, {5}, {6}, {7}, {8}});
  const plan::Schedule& schedule = *context.schedule;
  ASSERT_EQ(schedule.stream, (std::vector<int>{0, 1, 0, 1, 0, 1, 1}));
  ASSERT_TRUE(schedule.waits.empty());
  //                                             x   y  a  p  b  q  o   r  z
  EXPECT_EQ(buffers_by_node(context), (std::vector<int>{-1, -1, 0, 1, 2, 3, -1, 1, -1}));
}

TEST(MemoryPlanningTest, PrintsAssignmentsAndTotals) {
  // Byte sizes round up to 64-byte classes: %2 (16 bytes) and %3 (12 bytes) share a class with
  // %1 (64 bytes). %2 is written while kernel 1 still reads %1; %3 reuses %1's buffer.
  const PassContext context = run_memory_plan(R"(
    %0 = data() : f32[4,4]
    %1 = transpose(%0) {perm=[1,0]} : f32[4,4]
    %2 = sum(%1) {axes=[1], keepdims=false} : f32[4]
    %3 = slice(%2) {starts=[0], steps=[1]} : f32[3]
    %4 = neg(%3) : f32[3]
    return %4
  )",
                                              {{1}, {2}, {3}, {4}});
  EXPECT_EQ(print_memory_plan(*context.memory, context.graph),
            "%1 -> buffer 0 (64 bytes)\n"
            "%2 -> buffer 1 (64 bytes)\n"
            "%3 -> buffer 0 (64 bytes)\n"
            "planned: 2 buffers, 128 bytes (unplanned: 192 bytes)\n");
}

TEST(MemoryPlanningTest, PrintsInPlaceUpdates) {
  const PassContext context = run_memory_plan(R"(
    %0 = data() : f64[100]
    %1 = exp(%0) : f64[100]
    %2 = sin(%1) : f64[100]
    %3 = neg(%2) : f64[100]
    return %3
  )",
                                              {{1}, {2}, {3}});
  EXPECT_EQ(print_memory_plan(*context.memory, context.graph),
            "%1 -> buffer 0 (832 bytes)\n"
            "%2 -> buffer 0 (832 bytes) in place\n"
            "planned: 1 buffer, 832 bytes (unplanned: 1664 bytes)\n");
}

TEST(MemoryPlanningTest, MissingScheduleIsAClearError) {
  ir::Graph graph =
      ir::parse_graph("%0 = data() : f32[2]\n%1 = exp(%0) : f32[2]\nreturn %1\n").graph;
  auto plan = std::make_unique<plan::FusionPlan>(test::plan_of(graph, {{1}}));
  PassContext context(std::move(graph));
  context.fusion = std::move(plan);
  try {
    make_memory_planning()->run(context);
    FAIL() << "expected lz::Error";
  } catch (const Error& error) {
    EXPECT_STREQ(error.what(),
                 "[memplan] needs the schedule of the schedule pass; run fuse and schedule first");
  }
}

TEST(MemoryPlanningTest, ScheduleOfAnotherPlanIsAClearError) {
  PassContext context = test::run_schedule(kDiamond, {{1}, {2}, {3}, {4}});
  context.fusion = std::make_unique<plan::FusionPlan>(test::plan_of(context.graph, {{1, 2, 3, 4}}));
  try {
    make_memory_planning()->run(context);
    FAIL() << "expected lz::Error";
  } catch (const Error& error) {
    EXPECT_STREQ(error.what(),
                 "[memplan] the schedule covers 4 kernels but the fusion plan has 1; run schedule "
                 "again after fuse");
  }
}

}  // namespace
}  // namespace lz::passes
