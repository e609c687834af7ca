// Laziness and blocking points: recording computes nothing; each blocking point computes what it
// must, records why, and frees the graph behind what it computed.
#include <gtest/gtest.h>

#include <lazuli/lazuli.h>
#include <chrono>

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
  EXPECT_EQ(pending_count(), 5) << "exp, full(2), mul, full(1), add";
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

TEST_F(EvaluationTest, TheRecordTimesTheWholeEvaluation) {
  // Long enough to dwarf the passes: 16M random numbers drawn, a sine of each, summed.
  const lz::Tensor y = lz::sum(lz::sin(lz::random_uniform({1 << 24}, 3, -1, 1)));
  const auto start = std::chrono::steady_clock::now();
  y.wait_to_read();
  const double outside =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  const lz::EvaluationRecord record = lz::last_evaluation();
  EXPECT_GT(record.prepare_milliseconds, 0);
  EXPECT_GT(record.milliseconds, record.prepare_milliseconds);
  // It ran within the caller's wait, and was most of it.
  EXPECT_LE(record.milliseconds, outside);
  EXPECT_GE(record.milliseconds, 0.5 * outside) << "outside " << outside << " ms";
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
  out << x + 4;
  EXPECT_EQ(lz::last_evaluation().reason, lz::EvaluationReason::Print);
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

TEST_F(EvaluationTest, IntermediatesHeldByTheUserAreKeptOthersAreNot) {
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
  EXPECT_TRUE(held.is_ready()) << "held by the user, so computed once and kept";
  EXPECT_EQ(held.to_vector<float>(), std::vector<float>({3, 6}));
  EXPECT_TRUE(dropped.expired()) << "no one holds it: freed with the graph";
}

TEST_F(EvaluationTest, PendingNodeSharedWithAnUnevaluatedConsumerIsComputedOnce) {
  const lz::Tensor shared = lz::arange(1, 4) * 10;  // [10, 20, 30], not held below
  const lz::Tensor first = lz::sum(shared);
  const lz::Tensor second = shared + 1;
  EXPECT_EQ(first.item<float>(), 60);
  // `shared` is still needed by `second`, so it was kept as data instead of recomputed.
  ASSERT_EQ(second.node()->inputs.size(), 2u);
  EXPECT_TRUE(second.node()->inputs[0]->is_evaluated());
  EXPECT_EQ(second.to_vector<float>(), std::vector<float>({11, 21, 31}));
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
