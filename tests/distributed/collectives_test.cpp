// The collectives of lz::dist, run by every rank of an mpirun. Each rank's operand is a known
// function of its rank, so every rank computes the expected result on its own, in plain loops.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "lazuli/lazuli.h"

namespace {

using lz::Tensor;
using lz::dist::ReduceOp;

int rank() { return lz::dist::rank(); }
int ranks() { return lz::dist::world_size(); }

/// Rank r's operand: n values that differ between ranks, with ties across ranks at even i.
template <class T>
std::vector<T> operand_of(int r, int64_t n) {
  std::vector<T> values(n);
  for (int64_t i = 0; i < n; ++i) {
    values[i] = static_cast<T>(i % 2 == 0 ? i : (r + 1) * (i % 5) - 2 * r);
  }
  return values;
}

template <class T>
Tensor operand(int r, lz::Shape shape) {
  return lz::from_vector(operand_of<T>(r, lz::shape_size(shape)), shape);
}

template <class T>
void expect_reductions_of_dtype() {
  const lz::Shape shape{3, 5};
  const int64_t n = 15;
  std::vector<T> sum(n, 0);
  std::vector<T> max = operand_of<T>(0, n);
  std::vector<T> min = max;
  for (int r = 0; r < ranks(); ++r) {
    const std::vector<T> values = operand_of<T>(r, n);
    for (int64_t i = 0; i < n; ++i) {
      sum[i] += values[i];
      max[i] = std::max(max[i], values[i]);
      min[i] = std::min(min[i], values[i]);
    }
  }
  const Tensor x = operand<T>(rank(), shape);
  const Tensor summed = lz::dist::all_reduce(x, ReduceOp::Sum);
  EXPECT_EQ(summed.shape(), shape);
  EXPECT_EQ(summed.to_vector<T>(), sum);
  EXPECT_EQ(lz::dist::all_reduce(x, ReduceOp::Max).to_vector<T>(), max);
  EXPECT_EQ(lz::dist::all_reduce(x, ReduceOp::Min).to_vector<T>(), min);
}

TEST(CollectivesTest, AllReduceSumsAndComparesEveryRanksOperandInEveryNumericDtype) {
  expect_reductions_of_dtype<float>();
  expect_reductions_of_dtype<double>();
  expect_reductions_of_dtype<int32_t>();
  expect_reductions_of_dtype<int64_t>();
}

TEST(CollectivesTest, AllReduceMeanDividesTheSumByTheRanks) {
  const Tensor mean = lz::dist::all_reduce(operand<double>(rank(), {4}), ReduceOp::Mean);
  std::vector<double> expected(4, 0);
  for (int r = 0; r < ranks(); ++r) {
    const std::vector<double> values = operand_of<double>(r, 4);
    for (int i = 0; i < 4; ++i) expected[i] += values[i] / ranks();
  }
  const std::vector<double> got = mean.to_vector<double>();
  for (int i = 0; i < 4; ++i) EXPECT_DOUBLE_EQ(got[i], expected[i]) << i;
}

TEST(CollectivesTest, AllMaxAndAllMinOfBoolAreOrAndAnd) {
  // Rank 0 holds {true, false, false}; the others {true, true, false}.
  const Tensor x = lz::from_vector(std::vector<bool>{true, rank() != 0, false}, {3});
  EXPECT_EQ(lz::dist::all_reduce(x, ReduceOp::Max).to_vector<bool>(),
            (std::vector<bool>{true, true, false}));
  EXPECT_EQ(lz::dist::all_reduce(x, ReduceOp::Min).to_vector<bool>(),
            (std::vector<bool>{true, false, false}));
}

TEST(CollectivesTest, AllGatherConcatenatesTheRanksAlongAxisZero) {
  const Tensor gathered = lz::dist::all_gather(operand<int32_t>(rank(), {2, 3}));
  EXPECT_EQ(gathered.shape(), (lz::Shape{2 * ranks(), 3}));
  std::vector<int32_t> expected;
  for (int r = 0; r < ranks(); ++r) {
    const std::vector<int32_t> part = operand_of<int32_t>(r, 6);
    expected.insert(expected.end(), part.begin(), part.end());
  }
  EXPECT_EQ(gathered.to_vector<int32_t>(), expected);

  const Tensor stacked = lz::dist::all_gather(lz::full({}, 10.0 * rank(), lz::float64));
  EXPECT_EQ(stacked.shape(), (lz::Shape{ranks()}));
  for (int r = 0; r < ranks(); ++r) EXPECT_EQ(stacked.to_vector<double>()[r], 10.0 * r);
}

/// all_gather, reduce_scatter and broadcast of operand<T> against plain loops.
template <class T>
void expect_movement_of_dtype() {
  const int64_t rows = 2 * ranks();
  std::vector<T> joined;
  std::vector<T> sum(rows * 3, T{});
  for (int r = 0; r < ranks(); ++r) {
    const std::vector<T> part = operand_of<T>(r, 6);
    joined.insert(joined.end(), part.begin(), part.end());
    const std::vector<T> values = operand_of<T>(r, rows * 3);
    for (int64_t i = 0; i < rows * 3; ++i) sum[i] += values[i];
  }
  EXPECT_EQ(lz::dist::all_gather(operand<T>(rank(), {2, 3})).template to_vector<T>(), joined);
  EXPECT_EQ(lz::dist::reduce_scatter(operand<T>(rank(), {rows, 3})).template to_vector<T>(),
            std::vector<T>(sum.begin() + rank() * 6, sum.begin() + (rank() + 1) * 6));
  const int root = ranks() - 1;
  EXPECT_EQ(lz::dist::broadcast(operand<T>(rank(), {2, 3}), root).template to_vector<T>(),
            operand_of<T>(root, 6));
}

TEST(CollectivesTest, GatherScatterAndBroadcastMoveEveryDtype) {
  expect_movement_of_dtype<float>();
  expect_movement_of_dtype<double>();
  expect_movement_of_dtype<int32_t>();
  expect_movement_of_dtype<int64_t>();
  // bool: gathered and broadcast as bytes (reduce_scatter sums, which bool has not).
  const Tensor mine = lz::from_vector(std::vector<bool>{rank() % 2 == 0, true}, {2});
  std::vector<bool> joined;
  for (int r = 0; r < ranks(); ++r) joined.insert(joined.end(), {r % 2 == 0, true});
  EXPECT_EQ(lz::dist::all_gather(mine).to_vector<bool>(), joined);
  EXPECT_EQ(lz::dist::broadcast(mine, 1).to_vector<bool>(), (std::vector<bool>{false, true}));
}

TEST(CollectivesTest, EmptyOperandsMoveNothingAndSucceed) {
  EXPECT_EQ(lz::dist::all_reduce(lz::zeros({0, 3})).shape(), (lz::Shape{0, 3}));
  EXPECT_TRUE(lz::dist::all_reduce(lz::zeros({0})).to_vector<float>().empty());
  EXPECT_EQ(lz::dist::all_gather(lz::zeros({0, 2})).shape(), (lz::Shape{0, 2}));
  EXPECT_TRUE(lz::dist::broadcast(lz::zeros({0}), 0).to_vector<float>().empty());
}

TEST(CollectivesTest, ReduceScatterGivesEachRankItsPartOfTheSum) {
  const int64_t rows = 2 * ranks();
  const Tensor part = lz::dist::reduce_scatter(operand<float>(rank(), {rows, 3}));
  EXPECT_EQ(part.shape(), (lz::Shape{2, 3}));
  std::vector<float> sum(rows * 3, 0);
  for (int r = 0; r < ranks(); ++r) {
    const std::vector<float> values = operand_of<float>(r, rows * 3);
    for (int64_t i = 0; i < rows * 3; ++i) sum[i] += values[i];
  }
  const std::vector<float> mine(sum.begin() + rank() * 6, sum.begin() + (rank() + 1) * 6);
  EXPECT_EQ(part.to_vector<float>(), mine);

  const Tensor mean = lz::dist::reduce_scatter(operand<float>(rank(), {rows, 3}), ReduceOp::Mean);
  const std::vector<float> got = mean.to_vector<float>();
  for (int i = 0; i < 6; ++i) EXPECT_FLOAT_EQ(got[i], mine[i] / ranks()) << i;
}

TEST(CollectivesTest, BroadcastGivesEveryRankTheRootsOperand) {
  for (int root = 0; root < ranks(); ++root) {
    const Tensor x = operand<int64_t>(rank(), {5});
    EXPECT_EQ(lz::dist::broadcast(x, root).to_vector<int64_t>(), operand_of<int64_t>(root, 5))
        << "root " << root;
  }
}

TEST(CollectivesTest, CollectivesReadPendingWorkAndFeedFusedKernels) {
  // The operand is computed by a kernel of the same launch; the consumer reads the promise.
  const Tensor x = lz::arange(0, 6, 1, lz::float32) * static_cast<float>(rank() + 1);
  const Tensor y =
      lz::dist::all_reduce(x * 0.5f, ReduceOp::Sum) * 2.0f + lz::dist::all_reduce(x, ReduceOp::Max);
  const float factor = static_cast<float>(ranks() * (ranks() + 1)) / 2;  // 1 + 2 + ... + ranks
  const std::vector<float> got = y.to_vector<float>();
  for (int i = 0; i < 6; ++i) {
    EXPECT_FLOAT_EQ(got[i], static_cast<float>(i) * factor + static_cast<float>(i * ranks()));
  }
  const Tensor chained = lz::dist::all_reduce(lz::dist::all_reduce(x, ReduceOp::Sum));
  const std::vector<float> twice = chained.to_vector<float>();
  for (int i = 0; i < 6; ++i) EXPECT_FLOAT_EQ(twice[i], static_cast<float>(i) * factor * ranks());
}

TEST(CollectivesTest, RanksWhoseGraphsOrderCollectivesDifferentlyRunThemInRecordingOrder) {
  // Rank 0 adds the results first to last, the others last to first, so the graphs the ranks
  // collect list the collectives in different orders; they run in the order recorded.
  std::vector<Tensor> sums;
  for (int i = 0; i < 20; ++i) {
    sums.push_back(lz::dist::all_reduce(lz::full({i % 3 + 1}, i + rank(), lz::int64)));
  }
  if (rank() != 0) std::reverse(sums.begin(), sums.end());
  Tensor total = lz::zeros({}, lz::int64);
  for (const Tensor& sum : sums) total = total + lz::sum(sum);
  sums.clear();  // only the total is held, so the graph's order decides
  const int64_t rank_sum = static_cast<int64_t>(ranks()) * (ranks() - 1) / 2;
  int64_t expected = 0;
  for (int i = 0; i < 20; ++i) {
    expected += (i % 3 + 1) * (static_cast<int64_t>(i) * ranks() + rank_sum);
  }
  EXPECT_EQ(total.item<int64_t>(), expected);
}

TEST(CollectivesTest, GradientsFlowBackThroughCollectives) {
  // loss = sum over ranks of sum(w_r * all_sum(x)): d loss / d x_r = sum over ranks of w.
  const auto weight = [](int r) { return lz::full({3}, r + 1.0, lz::float64); };
  const Tensor x = lz::full({3}, 2.0 * rank(), lz::float64);
  const std::vector<Tensor> grads = lz::grad(
      [&](const std::vector<Tensor>& p) {
        return lz::sum(lz::dist::all_reduce(p[0], ReduceOp::Sum) * weight(rank()));
      },
      {x});
  const double weights = ranks() * (ranks() + 1) / 2.0;
  EXPECT_EQ(grads[0].to_vector<double>(), std::vector<double>(3, weights));

  // all_gather's gradient is the reduce_scatter of the cotangent: rank r's part of every w.
  const std::vector<Tensor> gather_grads = lz::grad(
      [&](const std::vector<Tensor>& p) {
        return lz::sum(lz::dist::all_gather(p[0]) * lz::arange(0, ranks(), 1, lz::float64) *
                       (rank() + 1.0));
      },
      {lz::full({1}, 1.0, lz::float64)});
  EXPECT_EQ(gather_grads[0].to_vector<double>(), std::vector<double>(1, rank() * weights));

  // broadcast's gradient reaches the root only.
  const std::vector<Tensor> broadcast_grads = lz::grad(
      [&](const std::vector<Tensor>& p) { return lz::sum(lz::dist::broadcast(p[0], 0) * 3.0); },
      {lz::full({2}, 1.0, lz::float64)});
  EXPECT_EQ(broadcast_grads[0].to_vector<double>(),
            std::vector<double>(2, rank() == 0 ? 3.0 * ranks() : 0.0));
}

TEST(CollectivesTest, RanksDisagreeingOnAShapeFailEveryRankWithTheSameMessage) {
  // Each rank brings another length: every rank learns all of them before any data moves.
  const Tensor x = lz::zeros({rank() + 1});
  const Tensor summed = lz::dist::all_reduce(x);
  std::string message;
  try {
    summed.wait_to_read();
  } catch (const lz::Error& error) {
    message = error.what();
  }
  EXPECT_NE(message.find("the ranks reached different collectives"), std::string::npos) << message;
  for (int r = 0; r < ranks(); ++r) {
    EXPECT_NE(message.find("rank " + std::to_string(r) + " ran all_sum of f32[" +
                           std::to_string(r + 1) + "]"),
              std::string::npos)
        << message;
  }
  // The group is still usable: the exchange finished on every rank.
  EXPECT_EQ(lz::dist::all_reduce(lz::ones({2})).to_vector<float>(),
            std::vector<float>(2, static_cast<float>(ranks())));
}

TEST(CollectivesTest, AnOperandThatFailsOnOneRankFailsTheCollectiveOnEveryRank) {
  // Rank 1 runs out of memory computing its operand; the others learn it from the exchange.
  const int64_t n = 1 << 20;
  if (rank() == 1) lz::set_memory_limit(n);  // bytes: a quarter of the operand
  const Tensor summed = lz::dist::all_reduce(lz::arange(0, n, 1, lz::float32) * 2.0f);
  std::string message;
  try {
    summed.wait_to_read();
  } catch (const lz::Error& error) {
    message = error.what();
  }
  lz::set_memory_limit(0);
  if (rank() == 1) {
    EXPECT_NE(message.find("out of memory"), std::string::npos) << message;
  } else {
    EXPECT_NE(message.find("rank 1 could not take part in all_sum of f32[1048576]"),
              std::string::npos)
        << message;
  }
  EXPECT_EQ(lz::dist::all_reduce(lz::ones({1})).item<float>(), static_cast<float>(ranks()));
}

TEST(CollectivesTest, ErrorsAtRecordingNameTheOpAndWhatIsValid) {
  const auto message_of = [](auto record) {
    try {
      record();
    } catch (const lz::Error& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message_of([] {
              lz::dist::all_reduce(lz::ones({2}, lz::bool_));
            }).find("is not defined for bool operands"),
            std::string::npos);
  EXPECT_NE(message_of([] {
              lz::dist::all_reduce(lz::ones({2}, lz::int32), ReduceOp::Mean);
            }).find("Mean needs a floating dtype, got int32"),
            std::string::npos);
  EXPECT_NE(message_of([] {
              lz::dist::reduce_scatter(lz::ones({ranks() + 1}));
            }).find("must split evenly among " + std::to_string(ranks()) + " ranks"),
            std::string::npos);
  EXPECT_NE(message_of([] {
              lz::dist::broadcast(lz::ones({2}), ranks());
            }).find("is not a rank of the group"),
            std::string::npos);
  EXPECT_NE(message_of([] {
              lz::dist::reduce_scatter(lz::ones({ranks()}), ReduceOp::Max);
            }).find("takes ReduceOp::Sum or ReduceOp::Mean"),
            std::string::npos);
}

TEST(CollectivesTest, AnOpRejectedOnOneRankLeavesTheOthersInStep) {
  if (rank() == 0) {
    EXPECT_THROW(lz::dist::reduce_scatter(lz::ones({ranks() + 1})), lz::Error);
    EXPECT_THROW(lz::dist::broadcast(lz::ones({2}), -1), lz::Error);
  }
  // Had rank 0 taken sequence numbers for them, this would fail on every rank.
  EXPECT_EQ(lz::dist::all_reduce(lz::ones({3})).to_vector<float>(),
            std::vector<float>(3, static_cast<float>(ranks())));
}

TEST(CollectivesTest, StatsCountTheCollectivesAndTheirBytes) {
  lz::waitall();
  lz::reset_stats();
  lz::dist::all_reduce(lz::ones({3})).wait_to_read();               // 12 bytes
  lz::dist::all_gather(lz::ones({2}, lz::float64)).wait_to_read();  // 16 bytes
  const lz::Stats stats = lz::stats();
  EXPECT_EQ(stats.collectives, 2);
  EXPECT_EQ(stats.collective_bytes, 28);
}

TEST(CollectivesTest, TheIrNamesEachCollectiveWithItsRanksAndSequence) {
  const Tensor y = lz::dist::broadcast(lz::ones({2}), ranks() - 1);
  const std::string ir = lz::ir_text({y});
  EXPECT_NE(ir.find("broadcast(%"), std::string::npos) << ir;
  EXPECT_NE(ir.find("{ranks=" + std::to_string(ranks()) + ", root=" + std::to_string(ranks() - 1) +
                    ", sequence="),
            std::string::npos)
      << ir;
  y.wait_to_read();
}

/// Now on the steady clock, in nanoseconds: CLOCK_MONOTONIC, one clock for every process of the
/// machine, where mpirun starts the ranks of these tests.
int64_t steady_nanoseconds() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// No rank leaves the barrier before the last one arrives: each rank stamps its arrival and its
// departure, the ranks exchange the stamps, and every departure must come after every arrival.
// An order of events, not a duration, so it holds whatever the load of the machine: rank 0's
// sleep only makes a barrier that lets the others through early likely to show it.
TEST(CollectivesTest, BarrierReturnsOnceEveryRankArrives) {
  if (rank() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const int64_t arrived = steady_nanoseconds();
  lz::dist::barrier();
  const int64_t left = steady_nanoseconds();
  const std::vector<int64_t> stamps =
      lz::dist::all_gather(lz::from_vector<int64_t>({arrived, left}, {2})).to_vector<int64_t>();
  ASSERT_EQ(stamps.size(), static_cast<size_t>(2 * ranks()));
  int64_t last_arrival = stamps[0];
  int64_t first_departure = stamps[1];
  for (int r = 0; r < ranks(); ++r) {
    last_arrival = std::max(last_arrival, stamps[2 * r]);
    first_departure = std::min(first_departure, stamps[2 * r + 1]);
  }
  EXPECT_GE(first_departure, last_arrival)
      << "a rank left the barrier " << (last_arrival - first_departure)
      << " ns before the last rank arrived";
}

// Run alone, with LZ_DIST_TIMEOUT=1 (tests/distributed/CMakeLists.txt): rank 1 never joins. The
// deadline is the behaviour under test: rank 0 fails by the timeout of 1 s, well before rank 1
// leaves at 3 s (which would end the wait another way), instead of hanging.
TEST(CollectivesTimeoutTest, ACollectiveARankNeverReachesFailsAfterTheTimeout) {
  if (rank() == 1) {
    std::this_thread::sleep_for(std::chrono::seconds(3));
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  const Tensor summed = lz::dist::all_reduce(lz::ones({4}));
  std::string message;
  try {
    summed.wait_to_read();
  } catch (const lz::Error& error) {
    message = error.what();
  }
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_NE(message.find("not every rank reached this collective within 1"), std::string::npos)
      << message;
  EXPECT_LT(waited, std::chrono::seconds(3)) << "the timeout, not rank 1's exit, ended the wait";
  // The group is broken now, and says so at once.
  const Tensor later = lz::dist::all_reduce(lz::ones({4}));
  try {
    later.wait_to_read();
    ADD_FAILURE() << "a collective after a timeout ran";
  } catch (const lz::Error& error) {
    EXPECT_NE(std::string(error.what()).find("timed out"), std::string::npos) << error.what();
  }
}

}  // namespace
