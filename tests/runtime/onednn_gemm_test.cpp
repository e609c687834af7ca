// onednn_sgemm against products summed in double: which products it takes, and every way it
// splits one across threads (blocks of rows, or of columns when `a` is stored transposed, with a
// last block shorter than the rest), each operand stored either way round.
#include "runtime/onednn_gemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "runtime/thread_pool.h"

namespace lz::runtime {
namespace {

std::vector<float> random_values(int64_t count, uint64_t seed) {
  std::mt19937_64 engine(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> values(count);
  for (float& value : values) value = uniform(engine);
  return values;
}

struct Product {
  int64_t m, k, n;
  bool a_transposed, b_transposed;
};

std::string describe(const Product& p) {
  return "[" + std::to_string(p.m) + ", " + std::to_string(p.k) + "]" +
         (p.a_transposed ? " stored transposed" : "") + " @ [" + std::to_string(p.k) + ", " +
         std::to_string(p.n) + "]" + (p.b_transposed ? " stored transposed" : "");
}

/// Runs onednn_sgemm on random operands stored as `p` says, and checks every element against the
/// sum in double, within 1e-5 of the sum of |a_ik b_kj| (the rounding of a float32 sum in
/// another order).
void expect_matches_double_sums(const Product& p) {
  SCOPED_TRACE(describe(p) + " on " + std::to_string(thread_count()) + " threads");
  // a[i][l] is stored at a_data[i * k + l], or at [l * m + i] when transposed; b likewise.
  const std::vector<float> a = random_values(p.m * p.k, 1);
  const std::vector<float> b = random_values(p.k * p.n, 2);
  const auto a_at = [&](int64_t i, int64_t l) {
    return a[p.a_transposed ? l * p.m + i : i * p.k + l];
  };
  const auto b_at = [&](int64_t l, int64_t j) {
    return b[p.b_transposed ? j * p.k + l : l * p.n + j];
  };
  std::vector<float> out(p.m * p.n, std::numeric_limits<float>::quiet_NaN());
  ASSERT_TRUE(onednn_sgemm({a.data(), p.a_transposed, p.a_transposed ? p.m : p.k},
                           {b.data(), p.b_transposed, p.b_transposed ? p.k : p.n}, out.data(), p.m,
                           p.k, p.n));
  int failures = 0;
  for (int64_t i = 0; i < p.m && failures < 5; ++i) {
    for (int64_t j = 0; j < p.n && failures < 5; ++j) {
      double sum = 0, magnitude = 0;
      for (int64_t l = 0; l < p.k; ++l) {
        sum += double{a_at(i, l)} * b_at(l, j);
        magnitude += std::abs(double{a_at(i, l)} * b_at(l, j));
      }
      const float got = out[i * p.n + j];
      if (!(std::abs(got - sum) <= 1e-5 * magnitude)) {
        ++failures;
        ADD_FAILURE() << "element (" << i << ", " << j << "): " << got << ", in double " << sum;
      }
    }
  }
}

class OnednnGemmTest : public ::testing::Test {
 protected:
  void TearDown() override { set_thread_count(0); }
};

TEST_F(OnednnGemmTest, TakesLargeProductsSplitEveryWayAcrossThreads) {
  // 301 rows: 19 blocks of 16, so 2, 3 and 5 threads leave a shorter last piece; 97 columns
  // likewise when a is stored transposed and threads take columns.
  for (const int threads : {1, 2, 3, 5}) {
    set_thread_count(threads);
    for (const bool a_transposed : {false, true}) {
      for (const bool b_transposed : {false, true}) {
        expect_matches_double_sums({301, 203, 97, a_transposed, b_transposed});
      }
    }
  }
}

TEST_F(OnednnGemmTest, NarrowProductsOfManyRowsAreTaken) {
  set_thread_count(2);
  expect_matches_double_sums({16411, 128, 16, false, false});
}

TEST_F(OnednnGemmTest, MoreThreadsThanBlocksLeaveTheRestIdle) {
  // 33 columns are 3 blocks of 16: 8 threads get at most 3 pieces.
  set_thread_count(8);
  expect_matches_double_sums({20000, 300, 33, true, false});
}

TEST_F(OnednnGemmTest, SmallOrNarrowProductsAreLeftToOpenBlas) {
  std::vector<float> a(64 * 1024, 1.0f), b(1024 * 1024, 1.0f), out(64 * 1024, -1.0f);
  // 64 x 64 x 128: far below 2^22 multiply-adds.
  EXPECT_FALSE(
      onednn_sgemm({a.data(), false, 64}, {b.data(), false, 128}, out.data(), 64, 64, 128));
  // 512 x 1024 x 10: large, but N below 16.
  std::vector<float> tall(512 * 1024, 1.0f);
  EXPECT_FALSE(
      onednn_sgemm({tall.data(), false, 1024}, {b.data(), false, 10}, out.data(), 512, 1024, 10));
  EXPECT_EQ(out[0], -1.0f) << "a declined product must leave out alone";
}

}  // namespace
}  // namespace lz::runtime
