// DataLoader: batch order, shuffling, the last partial batch, rows staying with their labels,
// and a slow consumer not making it prepare more than `prefetch` batches.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include <lazuli/data.h>
#include <lazuli/lazuli.h>

namespace {

using lz::Shape;
using lz::Tensor;
using lz::data::DataLoader;

/// 10 examples: inputs (10, 2) with row i = {i, -i}, labels (10) = 100 + i.
std::vector<Tensor> examples(int64_t n = 10) {
  std::vector<float> inputs;
  std::vector<int64_t> labels;
  for (int64_t i = 0; i < n; ++i) {
    inputs.push_back(static_cast<float>(i));
    inputs.push_back(static_cast<float>(-i));
    labels.push_back(100 + i);
  }
  return {lz::from_vector(inputs, {n, 2}), lz::from_vector(labels, {n})};
}

/// The example numbers of every batch of one epoch, each checked against its label.
std::vector<std::vector<int64_t>> epoch_rows(DataLoader& loader) {
  std::vector<std::vector<int64_t>> batches;
  while (auto batch = loader.next()) {
    const std::vector<float> inputs = (*batch)[0].to_vector<float>();
    const std::vector<int64_t> labels = (*batch)[1].to_vector<int64_t>();
    EXPECT_EQ((*batch)[0].shape(), (Shape{static_cast<int64_t>(labels.size()), 2}));
    std::vector<int64_t> rows;
    for (size_t i = 0; i < labels.size(); ++i) {
      EXPECT_EQ(inputs[2 * i], static_cast<float>(labels[i] - 100)) << "a row left its label";
      EXPECT_EQ(inputs[2 * i + 1], -inputs[2 * i]);
      rows.push_back(labels[i] - 100);
    }
    batches.push_back(rows);
  }
  return batches;
}

TEST(DataLoaderTest, UnshuffledBatchesComeInOrderWithTheLastPartial) {
  DataLoader loader(examples(), {.batch_size = 4, .shuffle = false});
  EXPECT_EQ(loader.size(), 10);
  EXPECT_EQ(loader.batches_per_epoch(), 3);
  const std::vector<std::vector<int64_t>> expected{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9}};
  EXPECT_EQ(epoch_rows(loader), expected);
  EXPECT_FALSE(loader.next().has_value()) << "the epoch stays over until the next starts";
  loader.start_epoch(1);
  EXPECT_EQ(epoch_rows(loader), expected);

  DataLoader dropping(examples(), {.batch_size = 4, .shuffle = false, .drop_last = true});
  EXPECT_EQ(dropping.batches_per_epoch(), 2);
  EXPECT_EQ(epoch_rows(dropping), (std::vector<std::vector<int64_t>>{{0, 1, 2, 3}, {4, 5, 6, 7}}));
}

TEST(DataLoaderTest, ShufflingGivesEachEpochAPermutationOfItsSeed) {
  DataLoader loader(examples(), {.batch_size = 3, .shuffle = true, .seed = 7});
  std::vector<std::vector<int64_t>> orders;
  for (int64_t epoch = 0; epoch < 3; ++epoch) {
    loader.start_epoch(epoch);
    std::vector<int64_t> order;
    for (const auto& batch : epoch_rows(loader))
      order.insert(order.end(), batch.begin(), batch.end());
    std::vector<int64_t> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    std::vector<int64_t> all(10);
    std::iota(all.begin(), all.end(), 0);
    EXPECT_EQ(sorted, all) << "epoch " << epoch << " is not a permutation";
    orders.push_back(order);
  }
  EXPECT_NE(orders[0], orders[1]);
  EXPECT_NE(orders[1], orders[2]);
  DataLoader again(examples(), {.batch_size = 3, .shuffle = true, .seed = 7});
  again.start_epoch(1);
  std::vector<int64_t> order;
  for (const auto& batch : epoch_rows(again)) order.insert(order.end(), batch.begin(), batch.end());
  EXPECT_EQ(order, orders[1]) << "the same seed and epoch give the same order";
}

TEST(DataLoaderTest, StartingAnEpochDropsWhatIsLeftOfTheCurrentOne) {
  DataLoader loader(examples(), {.batch_size = 4, .shuffle = false});
  ASSERT_TRUE(loader.next().has_value());
  loader.start_epoch(5);
  EXPECT_EQ(epoch_rows(loader).size(), 3u);
}

TEST(DataLoaderTest, ASlowConsumerDoesNotMakeItPrepareMore) {
  const std::vector<Tensor> arrays = examples(1000);
  for (const Tensor& array : arrays) array.wait_to_read();
  lz::reset_stats();
  DataLoader loader(arrays, {.batch_size = 10, .shuffle = true, .prefetch = 2});
  ASSERT_TRUE(loader.next().has_value());  // the worker runs; it may now prepare 2 more
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const int64_t batch_bytes = 10 * 2 * 4 + 10 * 8;
  EXPECT_LE(lz::stats().bytes_allocated, 3 * batch_bytes);
  int64_t batches = 1;
  while (loader.next()) ++batches;
  EXPECT_EQ(batches, 100);
}

TEST(DataLoaderTest, ArraysOfDifferentLengthsAreAnError) {
  EXPECT_THROW(DataLoader({lz::ones({4, 2}), lz::ones({3})}, {}), lz::Error);
  EXPECT_THROW(DataLoader({lz::ones({})}, {}), lz::Error);
  EXPECT_THROW(DataLoader(examples(), {.batch_size = 0}), lz::Error);
}

TEST(DataLoaderTest, ShardsSplitEachBatchOfAllShardsInTheSameOrder) {
  // 10 rows, 3 shards of 2: batches of 6 rows split 2/2/2, then the last 4 rows split 2/1/1.
  std::vector<std::vector<std::vector<int64_t>>> shards;
  for (int64_t shard = 0; shard < 3; ++shard) {
    DataLoader loader(examples(), {.batch_size = 2, .shuffle = false, .shards = 3, .shard = shard});
    EXPECT_EQ(loader.batches_per_epoch(), 2);
    shards.push_back(epoch_rows(loader));
  }
  EXPECT_EQ(shards[0], (std::vector<std::vector<int64_t>>{{0, 1}, {6, 7}}));
  EXPECT_EQ(shards[1], (std::vector<std::vector<int64_t>>{{2, 3}, {8}}));
  EXPECT_EQ(shards[2], (std::vector<std::vector<int64_t>>{{4, 5}, {9}}));

  // Shuffled, the shards of each batch are the parts of one loader's batch of 2 * 3 rows.
  DataLoader whole(examples(), {.batch_size = 6, .seed = 4});
  const std::vector<std::vector<int64_t>> batches = epoch_rows(whole);
  for (int64_t shard = 0; shard < 3; ++shard) {
    DataLoader part(examples(), {.batch_size = 2, .seed = 4, .shards = 3, .shard = shard});
    const std::vector<std::vector<int64_t>> parts = epoch_rows(part);
    ASSERT_EQ(parts.size(), batches.size());
    EXPECT_EQ(parts[0], std::vector<int64_t>(batches[0].begin() + 2 * shard,
                                             batches[0].begin() + 2 * shard + 2));
  }
}

TEST(DataLoaderTest, ALastBatchShorterThanTheShardsIsLeftOutOnEveryShard) {
  // 10 rows, 4 shards of 2: one batch of 8, then 2 rows for 4 shards.
  for (int64_t shard = 0; shard < 4; ++shard) {
    DataLoader loader(examples(), {.batch_size = 2, .shuffle = false, .shards = 4, .shard = shard});
    EXPECT_EQ(loader.batches_per_epoch(), 1);
    EXPECT_EQ(epoch_rows(loader), (std::vector<std::vector<int64_t>>{{2 * shard, 2 * shard + 1}}));
  }
  try {
    DataLoader loader(examples(), {.shards = 2, .shard = 2});
    ADD_FAILURE() << "shard 2 of 2 was taken";
  } catch (const lz::Error& error) {
    EXPECT_NE(std::string(error.what()).find("shard in 0..shards - 1"), std::string::npos)
        << error.what();
  }
}

}  // namespace
