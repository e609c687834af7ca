// Laziness and blocking points: recording computes nothing; each blocking point computes what it
// must, records why, and frees the graph behind what it computed.
#include <gtest/gtest.h>

#include <lazuli/lazuli.h>

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "ir/node.h"
#include "ir/pending_list.h"

namespace {

int64_t pending_count() { return lz::ir::PendingList::global().size(); }

class EvaluationTest : public ::testing::Test {
 protected:
  // Every test starts with nothing pending, whatever earlier tests left behind.
  void SetUp() override { lz::waitall(); }
};

TEST_F(EvaluationTest, RecordingDoesNotCompute) {
  const lz::Tensor x = lz::from_vector<float>({1, 2, 3}, {3});
  const lz::Tensor y = lz::exp(x) * 2 + 1;
  EXPECT_TRUE(x.is_ready()) << "data given by the user is already there";
  EXPECT_FALSE(y.is_ready());
  EXPECT_EQ(y.shape(), lz::Shape({3}));  // shape and dtype are known without computing
  EXPECT_EQ(y.dtype(), lz::float32);
  EXPECT_EQ(pending_count(), 3) << "exp, mul, add: the numbers are operands, not pending";
}

TEST_F(EvaluationTest, ItemComputesAndRecordsWhy) {
  const lz::Tensor y = lz::sum(lz::from_vector<int32_t>({1, 2, 3, 4}, {2, 2}));
  const uint64_t before = lz::last_evaluation().number;
  EXPECT_EQ(y.item<int64_t>(), 10);
  const lz::EvaluationRecord record = lz::last_evaluation();
  EXPECT_EQ(record.number, before + 1);
  EXPECT_EQ(record.reason, lz::EvaluationReason::Item);
  EXPECT_NE(record.location.find("evaluation_test.cpp:"), std::string::npos) << record.location;
  EXPECT_TRUE(y.is_ready());
}

/// The durations in milliseconds of the complete spans named `name` in the Chrome trace at `path`.
std::vector<double> span_milliseconds(const std::filesystem::path& path, const std::string& name) {
  std::ifstream file(path);
  std::stringstream contents;
  contents << file.rdbuf();
  const std::string text = contents.str();
  std::vector<double> durations;
  const std::string key = "\"name\":\"" + name + "\"";
  for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + 1)) {
    const size_t duration = text.find("\"dur\":", at);
    if (duration == std::string::npos || duration > text.find('}', at)) continue;
    // The trace holds microseconds.
    durations.push_back(std::strtod(text.c_str() + duration + 6, nullptr) / 1000);
  }
  return durations;
}

// The record times the whole evaluation: its preparation (the passes) and, after it, the kernel's
// run, all within the caller's wait. Checked by how the intervals nest, on the one steady clock
// the record and the trace read, never by a ratio of times: the trace's span of the kernel's run
// begins after the preparation ends and ends before the record does.
TEST_F(EvaluationTest, TheRecordTimesTheWholeEvaluation) {
  const std::filesystem::path trace =
      std::filesystem::temp_directory_path() /
      ("lazuli_evaluation_test_trace_" + std::to_string(getpid()) + ".json");
  const lz::Tensor y = lz::sum(lz::sin(lz::random_uniform({1 << 20}, 3, -1, 1)));
  lz::start_trace(trace.string());
  const auto start = std::chrono::steady_clock::now();
  y.wait_to_read();
  const double outside =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  lz::stop_trace();
  const std::vector<double> runs = span_milliseconds(trace, "run kernel");
  std::filesystem::remove(trace);
  const lz::EvaluationRecord record = lz::last_evaluation();
  ASSERT_GE(record.kernels, 1);
  ASSERT_EQ(static_cast<int64_t>(runs.size()), record.kernels) << "a span per kernel's run";
  double run = 0;  // the kernels run one after another, on the stream's thread
  for (const double each : runs) run += each;
  EXPECT_GT(record.prepare_milliseconds, 0);
  // The preparation, then the runs: the trace prints nanoseconds, so allow one per span.
  EXPECT_GE(record.milliseconds + 1e-6 * static_cast<double>(runs.size()),
            record.prepare_milliseconds + run)
      << "prepare " << record.prepare_milliseconds << " ms, run " << run << " ms";
  // The wait launched the evaluation and returned once the record was complete.
  EXPECT_LE(record.milliseconds, outside);
}

TEST_F(EvaluationTest, EachBlockingPointNamesItself) {
  const lz::Tensor x = lz::ones({2});
  (x + 1).to_vector<float>();
  EXPECT_EQ(lz::last_evaluation().reason, lz::EvaluationReason::ToVector);
  (x + 2).wait_to_read();
  EXPECT_EQ(lz::last_evaluation().reason, lz::EvaluationReason::WaitToRead);
  (x + 3).eval_async();
  EXPECT_EQ(lz::last_evaluation().reason, lz::EvaluationReason::EvalAsync);
  std::ostringstream out;
  const int recorded = __LINE__ + 1;
  const lz::Tensor printed = x + 4;
  out << printed;
  EXPECT_EQ(lz::last_evaluation().reason, lz::EvaluationReason::Print);
  // An operator takes no line of its own: the evaluation is named after the line that recorded
  // what it prints.
  EXPECT_NE(lz::last_evaluation().location.find("evaluation_test.cpp:" + std::to_string(recorded)),
            std::string::npos)
      << lz::last_evaluation().location;
  const lz::Tensor pending = x + 5;
  lz::waitall();
  EXPECT_EQ(lz::last_evaluation().reason, lz::EvaluationReason::WaitAll);
  EXPECT_TRUE(pending.is_ready());
}

TEST_F(EvaluationTest, WaitToReadComputesOnlyWhatTheTensorNeeds) {
  const lz::Tensor x = lz::arange(0, 4);
  const lz::Tensor wanted = x * 2;
  const lz::Tensor unrelated = x + 100;
  wanted.wait_to_read();
  EXPECT_TRUE(wanted.is_ready());
  EXPECT_FALSE(unrelated.is_ready());
  EXPECT_EQ(lz::last_evaluation().nodes, 3) << "arange, full(2), mul";
  EXPECT_EQ(wanted.to_vector<float>(), std::vector<float>({0, 2, 4, 6}));
}

TEST_F(EvaluationTest, WaitallComputesEveryPendingTensor) {
  const lz::Tensor a = lz::full({2}, 3) * 2;
  const lz::Tensor b = lz::full({3}, 1, lz::int32) - 5;
  lz::waitall();
  EXPECT_TRUE(a.is_ready());
  EXPECT_TRUE(b.is_ready());
  EXPECT_EQ(pending_count(), 0);
  EXPECT_EQ(a.to_vector<float>(), std::vector<float>({6, 6}));
  EXPECT_EQ(b.to_vector<int32_t>(), std::vector<int32_t>({-4, -4, -4}));
}

TEST_F(EvaluationTest, ComputedTensorsDropTheirInputs) {
  const lz::Tensor x = lz::ones({});
  lz::Tensor y = x;
  for (int i = 0; i < 10; ++i) y = y + 1;
  EXPECT_EQ(y.node()->inputs.size(), 2u);
  EXPECT_EQ(y.item<float>(), 11);
  EXPECT_TRUE(y.node()->inputs.empty()) << "the graph behind y must be freed";
  EXPECT_EQ(y.node()->op, lz::ir::Op::Data);
}

TEST_F(EvaluationTest, HeldIntermediatesCheapToRecomputeAreLeftPending) {
  const lz::Tensor x = lz::from_vector<float>({1, 2}, {2});
  const lz::Tensor held = x * 3;
  std::weak_ptr<lz::ir::Node> dropped;
  lz::Tensor result;
  {
    const lz::Tensor temporary = held + 1;
    dropped = temporary.node();
    result = lz::square(temporary);
  }
  EXPECT_EQ(result.to_vector<float>(), std::vector<float>({16, 49}));
  EXPECT_EQ(lz::last_evaluation().left_pending, 1);
  EXPECT_FALSE(held.is_ready()) << "elementwise: computed inside the kernel, not written out";
  EXPECT_TRUE(dropped.expired()) << "no one holds it: freed with the graph";
  const int64_t allocated = lz::stats().bytes_allocated;
  EXPECT_EQ(held.to_vector<float>(), std::vector<float>({3, 6}));
  EXPECT_EQ(lz::stats().bytes_allocated - allocated, 2 * 4) << "computed when read: its buffer";
}

TEST_F(EvaluationTest, HeldResultsOfReductionsAndMatmulsAreWrittenOut) {
  const lz::Tensor x = lz::from_vector<float>({1, 2, 3, 4}, {2, 2});
  const lz::Tensor product = lz::matmul(x, x);  // [[7, 10], [15, 22]]
  const lz::Tensor total = lz::sum(x);          // 10
  const lz::Tensor shifted = product - total;   // reads both: cheap, so left pending
  EXPECT_EQ(lz::sum(shifted).item<float>(), 54 - 40);
  EXPECT_TRUE(product.is_ready());
  EXPECT_TRUE(total.is_ready());
  EXPECT_FALSE(shifted.is_ready());
  // Reading it later computes only the subtraction: the matmul and the sum are not run again.
  EXPECT_EQ(shifted.to_vector<float>(), std::vector<float>({-3, 0, 5, 12}));
  EXPECT_EQ(lz::last_evaluation().kernels, 1);
  EXPECT_EQ(lz::last_evaluation().nodes, 1);
}

TEST_F(EvaluationTest, AHeldValueReadingAnUnheldReductionIsWrittenOut) {
  const lz::Tensor x = lz::from_vector<float>({1, 2, 3}, {3});
  const lz::Tensor centred = x - lz::mean(x);  // the mean is held by no one
  EXPECT_EQ(lz::sum(lz::square(centred)).item<float>(), 2);
  EXPECT_TRUE(centred.is_ready()) << "recomputing it would compute the mean again";
  EXPECT_EQ(centred.to_vector<float>(), std::vector<float>({-1, 0, 1}));
}

TEST_F(EvaluationTest, OneLineExpressionsWriteOnlyTheirResult) {
  const std::vector<float> a_values{1, 2, 3}, b_values{4, 5, 6}, c_values{7, 8, 9};
  const lz::Tensor a = lz::from_vector(a_values, {3});
  const lz::Tensor b = lz::from_vector(b_values, {3});
  const lz::Tensor c = lz::from_vector(c_values, {3});
  int64_t allocated = lz::stats().bytes_allocated;
  const std::vector<float> chain = (((a * b + c) * a - b) * 0.5 + c * c).to_vector<float>();
  EXPECT_EQ(lz::stats().bytes_allocated - allocated, 3 * 4) << "the C++ temporaries: not written";
  EXPECT_EQ(lz::last_evaluation().kernels, 1);
  for (size_t i = 0; i < 3; ++i) {
    const float a_i = a_values[i], b_i = b_values[i], c_i = c_values[i];
    EXPECT_FLOAT_EQ(chain[i], ((a_i * b_i + c_i) * a_i - b_i) * 0.5f + c_i * c_i);
  }
  allocated = lz::stats().bytes_allocated;
  EXPECT_EQ(lz::sum(a * b).item<float>(), 4 + 10 + 18);
  EXPECT_EQ(lz::stats().bytes_allocated - allocated, 4) << "a * b is not written out";
}

TEST_F(EvaluationTest, ALoopLeavesAtMostOneStepPending) {
  lz::Tensor x = lz::zeros({4});
  double expected = 0;
  for (int step = 0; step < 100; ++step) {
    x = x * 0.5 + 1;
    expected = expected * 0.5 + 1;
    EXPECT_NEAR(lz::sum(x).item<float>(), 4 * expected, 1e-5) << "step " << step;
    // At most two steps (two constants, mul and add each), the sum and the first step's zeros.
    EXPECT_LE(lz::last_evaluation().nodes, 10) << "the recomputed part must not grow";
  }
  EXPECT_NEAR(x.to_vector<float>()[0], expected, 1e-6);
}

TEST_F(EvaluationTest, PendingNodeSharedWithAnUnevaluatedConsumerIsLeftPending) {
  const lz::Tensor shared = lz::arange(1, 4) * 10;  // [10, 20, 30], held by `second` only
  const lz::Tensor first = lz::sum(shared);
  const lz::Tensor second = shared + 1;
  EXPECT_EQ(first.item<float>(), 60);
  ASSERT_EQ(second.node()->inputs.size(), 2u);
  EXPECT_FALSE(second.node()->inputs[0]->is_evaluated()) << "cheap: computed again for second";
  EXPECT_EQ(second.to_vector<float>(), std::vector<float>({11, 21, 31}));
}

TEST_F(EvaluationTest, WaitallComputesEveryHeldResult) {
  const lz::Tensor x = lz::from_vector<float>({1, 2}, {2});
  const lz::Tensor held = x * 3;
  const lz::Tensor result = held + 1;
  lz::waitall();
  EXPECT_TRUE(held.is_ready());
  EXPECT_TRUE(result.is_ready());
}

// Ops that read the same number share one constant node: `x = x + 1` in a loop makes one.
// Recording keeps it for the next such op, which no evaluation may take for a held result.
TEST_F(EvaluationTest, OpsReadingTheSameNumberShareOneConstantThatIsNeverWrittenOut) {
  const lz::Tensor x = lz::from_vector<float>({1, 2}, {2});
  const lz::Tensor a = x + 1;
  const lz::Tensor b = a * 1.0;  // the same number, 1.0f in float32
  const lz::Tensor c = a + 2;
  const lz::Tensor d = lz::from_vector<double>({1, 2}, {2}) + 1;  // 1 in float64: another
  const lz::ir::Node* one = a.node()->inputs[1].get();
  EXPECT_EQ(b.node()->inputs[1].get(), one);
  EXPECT_NE(c.node()->inputs[1].get(), one);
  EXPECT_NE(d.node()->inputs[1].get(), one);
  EXPECT_EQ(c.node()->inputs[1]->params[0].floating, 2.0);
  lz::waitall();  // computes every held result: a, b, c, d, and not the constants
  EXPECT_EQ(a.to_vector<float>(), std::vector<float>({2, 3}));
  EXPECT_EQ(b.to_vector<float>(), std::vector<float>({2, 3}));
  EXPECT_EQ(c.to_vector<float>(), std::vector<float>({4, 5}));
  EXPECT_EQ(d.to_vector<double>(), std::vector<double>({2, 3}));
  const lz::Tensor e = x + 1;
  EXPECT_EQ(e.node()->inputs[1].get(), one) << "still the recorded constant, not data";
  EXPECT_EQ(e.node()->inputs[1]->op, lz::ir::Op::Full);
  EXPECT_FALSE(e.node()->inputs[1]->is_evaluated());
  EXPECT_EQ(e.to_vector<float>(), std::vector<float>({2, 3}));
}

TEST_F(EvaluationTest, DroppedTensorsLeaveThePendingList) {
  const int64_t before = pending_count();
  { const lz::Tensor unused = lz::ones({8}) + 1; }
  EXPECT_EQ(pending_count(), before);
}

TEST_F(EvaluationTest, AMillionChainedOpsEvaluateAndFreeWithoutOverflow) {
  const lz::Tensor one = lz::ones({}, lz::int64);
  lz::Tensor x = lz::zeros({}, lz::int64);
  for (int i = 0; i < 1'000'000; ++i) x = x + one;
  EXPECT_EQ(x.item<int64_t>(), 1'000'000);
  EXPECT_EQ(pending_count(), 0);
  lz::Tensor y = one;
  for (int i = 0; i < 1'000'000; ++i) y = y + one;
  y = lz::Tensor();  // frees a million pending nodes at once
  EXPECT_EQ(pending_count(), 0);
}

}  // namespace
