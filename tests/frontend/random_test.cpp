// Counter-based random numbers: reproducible from the seed, and distributed as documented.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

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

// Box-Muller's logarithm and cosine are lazuli's own (counter_rng.h), so that every device and
// the CPU's vectorized kernels give the same bits: they must still be the functions, within
// about an ulp, over the values Box-Muller gives them.
TEST(RandomTest, TheLogarithmAndCosineOfBoxMullerAreWithinAnUlpOrTwo) {
  using lz::reference::cos_of_turn;
  using lz::reference::log_of_normal;
  using lz::reference::uniform_unit;
  double worst_log_ulps = 0;
  double worst_cos_error = 0;
  for (uint64_t i = 0; i < 200000; ++i) {
    const double u1 = 1.0 - uniform_unit(11, 2 * i);
    const double u2 = uniform_unit(11, 2 * i + 1);
    const double log = std::log(u1);
    if (log != 0) {
      const double ulp = std::nextafter(std::fabs(log), INFINITY) - std::fabs(log);
      worst_log_ulps = std::max(worst_log_ulps, std::fabs(log_of_normal(u1) - log) / ulp);
    } else {
      ASSERT_EQ(log_of_normal(u1), 0) << u1;
    }
    // cos(2 pi u2) in long double: its argument's rounding is far below a double's ulp.
    const long double turn = 6.283185307179586476925286766559L * static_cast<long double>(u2);
    worst_cos_error =
        std::max(worst_cos_error, static_cast<double>(std::fabs(cos_of_turn(u2) - std::cos(turn))));
  }
  EXPECT_LE(worst_log_ulps, 1.0);
  EXPECT_LE(worst_cos_error, 3e-16);  // about an ulp of values near 1
  EXPECT_EQ(log_of_normal(0x1p-53), -53 * std::log(2.0));
  EXPECT_EQ(cos_of_turn(0), 1);
  EXPECT_EQ(cos_of_turn(0.5), -1);
}

// The CPU's compiled kernels compute the normal numbers inline, a vector at a time: the same
// bits as the interpreter, the specification, in both floating dtypes and in the loop's tail.
TEST(RandomTest, CompiledNormalNumbersAreTheInterpretersBits) {
  for (const lz::DType dtype : {lz::float32, lz::float64}) {
    const auto draw = [&] {
      return lz::random_normal({100003}, 17, 0.25, 2, dtype)
          .astype(lz::float64)
          .to_vector<double>();
    };
    const std::vector<double> compiled = draw();
    lz::set_jit(false);
    const std::vector<double> interpreted = draw();
    lz::set_jit(true);
    ASSERT_EQ(compiled.size(), interpreted.size());
    for (size_t i = 0; i < compiled.size(); ++i) {
      ASSERT_EQ(compiled[i], interpreted[i]) << lz::dtype_name(dtype) << " element " << i;
    }
  }
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
