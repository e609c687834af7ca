// onednn_sgemm against products summed in double: each operand stored either way round, b packed
// or read as stored, blocks of a larger product (rows `out_leading` apart), several threads running
// one layout at once, each product reading its own b, and which products onednn_takes.
#include "runtime/cpu/onednn_gemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

// libgomp's, which oneDNN runs on (runtime/cpu/onednn_gemm.cpp).
extern "C" void omp_set_num_threads(int num_threads);
extern "C" int omp_get_max_threads(void);

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

/// Runs onednn_sgemm on random operands stored as `p` says, writing columns [first, first + n)
/// of an output `out_n` wide, and checks every element against the sum in double, within 1e-5
/// of the sum of |a_ik b_kj| (the rounding of a float32 sum in another order), and that the
/// columns around them are untouched.
void expect_matches_double_sums(const Product& p, int64_t out_n = 0, int64_t first = 0,
                                bool packs_b = true) {
  if (out_n == 0) out_n = p.n;
  SCOPED_TRACE(describe(p) + " into columns " + std::to_string(first) + "+ of " +
               std::to_string(out_n) + (packs_b ? ", b packed" : ", b as stored"));
  // a[i][l] is stored at a_data[i * k + l], or at [l * m + i] when transposed; b likewise.
  const std::vector<float> a = random_values(p.m * p.k, 1);
  const std::vector<float> b = random_values(p.k * p.n, 2);
  const auto a_at = [&](int64_t i, int64_t l) {
    return a[p.a_transposed ? l * p.m + i : i * p.k + l];
  };
  const auto b_at = [&](int64_t l, int64_t j) {
    return b[p.b_transposed ? j * p.k + l : l * p.n + j];
  };
  const float untouched = -12345.0f;
  std::vector<float> out(p.m * out_n, untouched);
  ASSERT_TRUE(onednn_sgemm(packs_b ? new_onednn_product() : 0,
                           {a.data(), p.a_transposed, p.a_transposed ? p.m : p.k},
                           {b.data(), p.b_transposed, p.b_transposed ? p.k : p.n},
                           out.data() + first, out_n, p.m, p.k, p.n));
  int failures = 0;
  for (int64_t i = 0; i < p.m && failures < 5; ++i) {
    for (int64_t j = 0; j < out_n && failures < 5; ++j) {
      const float got = out[i * out_n + j];
      if (j < first || j >= first + p.n) {
        if (got != untouched) {
          ++failures;
          ADD_FAILURE() << "element (" << i << ", " << j << ") outside the block was written";
        }
        continue;
      }
      double sum = 0, magnitude = 0;
      for (int64_t l = 0; l < p.k; ++l) {
        sum += double{a_at(i, l)} * b_at(l, j - first);
        magnitude += std::abs(double{a_at(i, l)} * b_at(l, j - first));
      }
      if (!(std::abs(got - sum) <= 1e-5 * magnitude)) {
        ++failures;
        ADD_FAILURE() << "element (" << i << ", " << j << "): " << got << ", in double " << sum;
      }
    }
  }
}

TEST(OnednnGemmTest, EveryOperandLayoutMatchesDoubleSums) {
  for (const bool a_transposed : {false, true}) {
    for (const bool b_transposed : {false, true}) {
      for (const bool packs_b : {true, false}) {
        expect_matches_double_sums({301, 203, 97, a_transposed, b_transposed}, 0, 0, packs_b);
      }
    }
  }
}

TEST(OnednnGemmTest, ABlockOfColumnsWritesOnlyItsColumns) {
  expect_matches_double_sums({77, 130, 33, true, false}, /*out_n=*/100, /*first=*/40);
}

TEST(OnednnGemmTest, ThreadsRunOneLayoutAtOnce) {
  // Each primitive's scratch memory is its caller's: with oneDNN's default, runs of one
  // primitive shared one scratchpad and gave wrong sums.
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([] { expect_matches_double_sums({400, 256, 64, false, false}); });
  }
  for (std::thread& thread : threads) thread.join();
}

// A blocking point runs work on the user's thread: oneDNN runs there with OpenMP's count at 1,
// and the user's own count is put back.
TEST(OnednnGemmTest, TheCallersOpenMpThreadCountIsPutBack) {
  omp_set_num_threads(3);
  expect_matches_double_sums({300, 200, 64, false, false});
  EXPECT_EQ(omp_get_max_threads(), 3);
  omp_set_num_threads(1);
  expect_matches_double_sums({300, 200, 64, false, true});
  EXPECT_EQ(omp_get_max_threads(), 1);
}

// Each thread packs b once per product and keeps it for the product's next blocks: a new
// product packs b again, even at the same address with new values (a buffer the allocator handed
// out again), and a block of the same product reading another b (a product split by columns)
// packs that one.
TEST(OnednnGemmTest, EachProductReadsItsOwnB) {
  constexpr int64_t m = 64, k = 128, n = 64;
  const std::vector<float> a = random_values(m * k, 3);
  std::vector<float> b = random_values(k * 2 * n, 4);
  const auto product_of = [&](uint64_t product, int64_t first_column) {
    std::vector<float> out(m * n);
    EXPECT_TRUE(onednn_sgemm(product, {a.data(), false, k}, {b.data() + first_column, false, 2 * n},
                             out.data(), n, m, k, n));
    return out;
  };
  const auto expected = [&](int64_t first_column) {
    std::vector<float> out(m * n);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t l = 0; l < k; ++l)
          sum += double{a[i * k + l]} * b[l * 2 * n + first_column + j];
        out[i * n + j] = static_cast<float>(sum);
      }
    }
    return out;
  };
  const auto expect_near = [](const std::vector<float>& got, const std::vector<float>& want,
                              const std::string& what) {
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_NEAR(got[i], want[i], 1e-4) << what << ", element " << i;
    }
  };
  const uint64_t first = new_onednn_product();
  expect_near(product_of(first, 0), expected(0), "the first product");
  expect_near(product_of(first, n), expected(n), "its second block of columns");
  for (float& value : b) value = -value;
  expect_near(product_of(new_onednn_product(), 0), expected(0), "a new product, new values");
}

TEST(OnednnGemmTest, TakesLargeProductsOfSixteenColumnsOrMore) {
  EXPECT_TRUE(onednn_takes(131072, 128, 16));
  EXPECT_TRUE(onednn_takes(512, 1024, 1024));
  EXPECT_FALSE(onednn_takes(64, 64, 128)) << "2^19 multiply-adds: OpenBLAS's";
  EXPECT_FALSE(onednn_takes(512, 1024, 10)) << "N below 16: OpenBLAS's";
}

}  // namespace
}  // namespace lz::runtime
