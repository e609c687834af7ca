// Data-parallel training across the ranks of an mpirun: each rank trains on its shard of every
// batch and must end with the parameters one process gets on the whole batches, which every
// rank also computes on its own (no collectives) as the expectation.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include "lazuli/lazuli.h"

namespace {

using lz::Tensor;
using lz::dist::ReduceOp;

int rank() { return lz::dist::rank(); }
int ranks() { return lz::dist::world_size(); }

constexpr int64_t kRowsPerRank = 5;
constexpr int kSteps = 4;

/// Step `step`'s whole batch: (kRowsPerRank * ranks, 4) inputs and (.., 3) targets.
std::vector<Tensor> whole_batch(int step) {
  const int64_t rows = kRowsPerRank * ranks();
  std::vector<double> x(rows * 4);
  std::vector<double> t(rows * 3);
  for (int64_t i = 0; i < rows * 4; ++i) x[i] = std::sin(0.7 * i + step);
  for (int64_t i = 0; i < rows * 3; ++i) t[i] = std::cos(0.3 * i - step);
  return {lz::from_vector(x, {rows, 4}), lz::from_vector(t, {rows, 3})};
}

/// Rank `r`'s shard of a batch: its rows.
std::vector<Tensor> shard(const std::vector<Tensor>& batch, int r) {
  std::vector<Tensor> part;
  for (const Tensor& array : batch) {
    part.push_back(lz::slice(array, {r * kRowsPerRank}, {(r + 1) * kRowsPerRank}));
  }
  return part;
}

/// A two-layer model's mean squared error on `batch`.
lz::ScalarFunction loss_on(const std::vector<Tensor>& batch) {
  return [batch](const std::vector<Tensor>& p) {
    const Tensor hidden = lz::tanh(lz::matmul(batch[0], p[0]) + p[1]);
    return lz::mean(lz::square(lz::matmul(hidden, p[2]) - batch[1]));
  };
}

/// Parameters that differ between ranks until broadcast_parameters makes them rank 0's.
std::vector<Tensor> initial_parameters(int r) {
  return {lz::random_normal({4, 6}, 11 + r, 0, 0.5, lz::float64), lz::zeros({6}, lz::float64),
          lz::random_normal({6, 3}, 23 + r, 0, 0.5, lz::float64)};
}

template <class Optimizer>
void expect_the_single_process_parameters(Optimizer distributed, Optimizer single) {
  std::vector<Tensor> params = lz::dist::broadcast_parameters(initial_parameters(rank()));
  std::vector<Tensor> expected = initial_parameters(0);
  for (int step = 0; step < kSteps; ++step) {
    const std::vector<Tensor> batch = whole_batch(step);
    // A bucket of 100 bytes: several all-reduces per step, of one and several gradients.
    auto [loss, grads] = lz::dist::value_and_grad(loss_on(shard(batch, rank())), params, 100);
    distributed.step(params, grads);
    auto [expected_loss, expected_grads] = lz::value_and_grad(loss_on(batch), expected);
    single.step(expected, expected_grads);
    // The group's loss is the mean of the ranks' losses, which is the whole batch's loss.
    EXPECT_NEAR(lz::dist::all_reduce(loss, ReduceOp::Mean).item<double>(),
                expected_loss.item<double>(), 1e-12)
        << "step " << step;
  }
  for (size_t i = 0; i < params.size(); ++i) {
    const std::vector<double> got = params[i].to_vector<double>();
    const std::vector<double> want = expected[i].to_vector<double>();
    ASSERT_EQ(got.size(), want.size());
    for (size_t j = 0; j < got.size(); ++j) {
      EXPECT_NEAR(got[j], want[j], 1e-12) << "parameter " << i << " element " << j;
    }
  }
}

TEST(DataParallelTest, SgdWithMomentumOnShardsTakesTheStepsOfOneProcessOnTheWholeBatch) {
  const lz::optim::SGD::Options options{.learning_rate = 0.1, .momentum = 0.9};
  expect_the_single_process_parameters(lz::optim::SGD(options), lz::optim::SGD(options));
}

TEST(DataParallelTest, AdamOnShardsTakesTheStepsOfOneProcessOnTheWholeBatch) {
  const lz::optim::Adam::Options options{.learning_rate = 0.05};
  expect_the_single_process_parameters(lz::optim::Adam(options), lz::optim::Adam(options));
}

TEST(DataParallelTest, AverageGradientsAveragesEveryDtypeWhateverTheBuckets) {
  const std::vector<Tensor> grads{lz::full({2, 3}, rank() + 1.0, lz::float32),
                                  lz::full({5}, 2.0 * rank(), lz::float64),
                                  lz::full({1}, -1.0 * rank(), lz::float64)};
  const double mean_rank = (ranks() - 1) / 2.0;
  for (int64_t bucket_bytes : {int64_t{1}, int64_t{40}, lz::dist::kDefaultBucketBytes}) {
    const std::vector<Tensor> averaged = lz::dist::average_gradients(grads, bucket_bytes);
    EXPECT_EQ(averaged[0].shape(), (lz::Shape{2, 3}));
    EXPECT_EQ(averaged[0].to_vector<float>(),
              std::vector<float>(6, static_cast<float>(mean_rank + 1)));
    EXPECT_EQ(averaged[1].to_vector<double>(), std::vector<double>(5, 2 * mean_rank));
    EXPECT_EQ(averaged[2].to_vector<double>(), std::vector<double>(1, -mean_rank));
  }
}

TEST(DataParallelTest, MomentsAreThoseOfTheRanksBatchesJoined) {
  // Rank r's batch (3, 2): rows r, r + 10, r + 20 (plus 1000 in column 1, a large mean).
  const auto batch_of = [](int r) {
    std::vector<double> values;
    for (int i = 0; i < 3; ++i) {
      values.push_back(r + 10.0 * i);
      values.push_back(1000 + r * r + 10.0 * i);
    }
    return values;
  };
  std::vector<double> joined;
  for (int r = 0; r < ranks(); ++r) {
    const std::vector<double> part = batch_of(r);
    joined.insert(joined.end(), part.begin(), part.end());
  }
  const int64_t rows = 3 * ranks();
  const Tensor all = lz::from_vector(joined, {rows, 2});
  const Tensor expected_mean = lz::mean(all, 0);
  const Tensor expected_variance = lz::mean(lz::square(all - expected_mean), 0);

  const lz::dist::Moments moments = lz::dist::moments(lz::from_vector(batch_of(rank()), {3, 2}), 0);
  EXPECT_EQ(moments.mean.shape(), (lz::Shape{2}));
  const std::vector<double> mean = moments.mean.to_vector<double>();
  const std::vector<double> variance = moments.variance.to_vector<double>();
  for (int c = 0; c < 2; ++c) {
    EXPECT_NEAR(mean[c], expected_mean.to_vector<double>()[c], 1e-9) << c;
    EXPECT_NEAR(variance[c], expected_variance.to_vector<double>()[c], 1e-9) << c;
  }
  const lz::dist::Moments kept =
      lz::dist::moments(lz::from_vector(batch_of(rank()), {3, 2}), 0, /*keepdims=*/true);
  EXPECT_EQ(kept.variance.shape(), (lz::Shape{1, 2}));
}

TEST(DataParallelTest, ShardedLoadersGiveEachRankItsPartOfEveryBatch) {
  const int64_t rows = 4 * ranks() + 1;
  std::vector<int64_t> ids(rows);
  for (int64_t i = 0; i < rows; ++i) ids[i] = i;
  lz::data::DataLoader loader({lz::from_vector(ids, {rows})},
                              {.batch_size = 2, .seed = 9, .shards = ranks(), .shard = rank()});
  // Every row of an epoch comes to exactly one rank, save the last when too few remain.
  std::vector<int64_t> seen(rows, 0);
  while (auto batch = loader.next()) {
    const Tensor counts = lz::sum(
        lz::astype(lz::expand_dims((*batch)[0], 1) == lz::arange(0, rows, 1, lz::int64), lz::int64),
        0);
    const std::vector<int64_t> all = lz::dist::all_reduce(counts).to_vector<int64_t>();
    for (int64_t i = 0; i < rows; ++i) seen[i] += all[i];
  }
  int64_t total = 0;
  for (int64_t count : seen) {
    EXPECT_LE(count, 1);
    total += count;
  }
  EXPECT_EQ(total, rows - 1);  // the last row alone is fewer than the shards
}

}  // namespace
