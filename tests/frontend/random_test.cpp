// Counter-based random numbers: reproducible from the seed, and distributed as documented.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include <lazuli/lazuli.h>

#include "reference/counter_rng.h"

namespace {

TEST(RandomTest, MixerMatchesSplitMix64) {
  // The first output of the published SplitMix64 generator seeded with 0.
  EXPECT_EQ(lz::reference::mix64(0x9e3779b97f4a7c15ULL), 0xe220a8397b1dcdafULL);
}

TEST(RandomTest, SameSeedSameValuesDifferentSeedDifferentValues) {
  const auto a = lz::random_uniform({1000}, 42).to_vector<float>();
  const auto b = lz::random_uniform({1000}, 42).to_vector<float>();
  const auto c = lz::random_uniform({1000}, 43).to_vector<float>();
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

TEST(RandomTest, ValuesDependOnlyOnSeedAndPosition) {
  // Element i is the same whatever the shape it is drawn into.
  const auto flat = lz::random_normal({12}, 9, 0, 1, lz::float64).to_vector<double>();
  const auto matrix = lz::random_normal({3, 4}, 9, 0, 1, lz::float64).to_vector<double>();
  EXPECT_EQ(flat, matrix);
  const auto prefix = lz::random_normal({5}, 9, 0, 1, lz::float64).to_vector<double>();
  EXPECT_TRUE(std::equal(prefix.begin(), prefix.end(), flat.begin()));
}

TEST(RandomTest, UniformStaysInRangeWithTheRightMoments) {
  const auto values = lz::random_uniform({100000}, 1, -2, 6, lz::float64).to_vector<double>();
  double total = 0;
  double squares = 0;
  for (double v : values) {
    ASSERT_GE(v, -2);
    ASSERT_LT(v, 6);
    total += v;
    squares += v * v;
  }
  const double mean = total / values.size();
  const double variance = squares / values.size() - mean * mean;
  EXPECT_NEAR(mean, 2.0, 0.05);           // (low + high) / 2
  EXPECT_NEAR(variance, 64.0 / 12, 0.1);  // (high - low)^2 / 12
}

TEST(RandomTest, NormalHasTheRequestedMeanAndDeviation) {
  const auto values = lz::random_normal({100000}, 2, 3, 0.5).to_vector<float>();
  double total = 0;
  double squares = 0;
  for (float v : values) {
    total += v;
    squares += static_cast<double>(v) * v;
  }
  const double mean = total / values.size();
  const double deviation = std::sqrt(squares / values.size() - mean * mean);
  EXPECT_NEAR(mean, 3.0, 0.01);
  EXPECT_NEAR(deviation, 0.5, 0.01);
}

TEST(RandomTest, IntegerUniformCoversEachValueOfTheRange) {
  const auto values = lz::random_uniform({10000}, 5, 0, 4, lz::int32).to_vector<int32_t>();
  int counts[4] = {};
  for (int32_t v : values) {
    ASSERT_GE(v, 0);
    ASSERT_LT(v, 4);
    ++counts[v];
  }
  for (int count : counts) EXPECT_NEAR(count, 2500, 200);
}

}  // namespace
