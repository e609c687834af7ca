// lazuli's kernel for narrow float32 products (runtime/cpu/narrow_gemm.h) against sums in double,
// for each instruction set the processor has: every column count up to 32 (whole vectors, parts of
// one, more than one), row counts around the rows computed at a time, strided operands and
// output, and nothing written beyond the output's columns.
#include "runtime/cpu/narrow_gemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace lz::runtime {
namespace {

const char* isa_name(NarrowGemmIsa isa) {
  return isa == NarrowGemmIsa::Avx512 ? "AVX-512" : "AVX2";
}

/// Checks one product: a [m, k] with rows `a_leading` apart, b [k, n] with rows `b_leading`
/// apart, out with rows `out_leading` apart, whose elements beyond column n must stay as they
/// were. An element may differ from the double sum by k float32 roundings of the sum of |a*b|.
void expect_exact_up_to_rounding(NarrowGemmIsa isa, int64_t m, int64_t k, int64_t n,
                                 int64_t a_leading, int64_t b_leading, int64_t out_leading) {
  SCOPED_TRACE(std::string(isa_name(isa)) + ": (" + std::to_string(m) + "," + std::to_string(k) +
               ") @ (" + std::to_string(k) + "," + std::to_string(n) + "), leading " +
               std::to_string(a_leading) + ", " + std::to_string(b_leading) + ", " +
               std::to_string(out_leading));
  std::mt19937 random(static_cast<uint32_t>(m * 1000003 + k * 1009 + n));
  std::normal_distribution<float> normal;
  std::vector<float> a(m * a_leading), b(k * b_leading);
  for (float& x : a) x = normal(random);
  for (float& x : b) x = normal(random);
  constexpr float kUntouched = -12345.0f;
  std::vector<float> out(m * out_leading, kUntouched);
  narrow_sgemm_with(isa, {a.data(), false, a_leading}, {b.data(), false, b_leading}, out.data(),
                    out_leading, m, k, n);
  int failures = 0;
  for (int64_t i = 0; i < m && failures < 5; ++i) {
    for (int64_t j = 0; j < out_leading; ++j) {
      const float got = out[i * out_leading + j];
      if (j >= n) {
        if (got != kUntouched && ++failures <= 5) {
          ADD_FAILURE() << "wrote element (" << i << "," << j << ") beyond " << n << " columns";
        }
        continue;
      }
      double sum = 0, magnitude = 0;
      for (int64_t p = 0; p < k; ++p) {
        const double term = double{a[i * a_leading + p]} * b[p * b_leading + j];
        sum += term;
        magnitude += std::abs(term);
      }
      const double tolerance = static_cast<double>(k) * 6e-8 * magnitude + 1e-30;
      if (!(std::abs(got - sum) <= tolerance) && ++failures <= 5) {
        ADD_FAILURE() << "element (" << i << "," << j << "): " << got << ", the double sum " << sum;
      }
    }
  }
}

class NarrowGemmTest : public ::testing::TestWithParam<NarrowGemmIsa> {};

TEST_P(NarrowGemmTest, EveryColumnCountMatchesSumsInDouble) {
  const NarrowGemmIsa isa = GetParam();
  if (!narrow_gemm_runs(isa)) GTEST_SKIP() << "this processor has no " << isa_name(isa);
  for (int64_t n = 1; n <= 32; ++n) {
    for (const int64_t m : {1, 5, 8, 13, 100}) {
      expect_exact_up_to_rounding(isa, m, 37, n, 37, n, n);
    }
  }
}

TEST_P(NarrowGemmTest, StridedOperandsAndOutput) {
  const NarrowGemmIsa isa = GetParam();
  if (!narrow_gemm_runs(isa)) GTEST_SKIP() << "this processor has no " << isa_name(isa);
  for (const int64_t n : {3, 16, 20, 32}) {
    for (const int64_t k : {1, 2, 128}) {
      expect_exact_up_to_rounding(isa, 50, k, n, k + 5, n + 3, n + 7);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EachInstructionSet, NarrowGemmTest,
                         ::testing::Values(NarrowGemmIsa::Avx512, NarrowGemmIsa::Avx2),
                         [](const ::testing::TestParamInfo<NarrowGemmIsa>& info) {
                           return info.param == NarrowGemmIsa::Avx512 ? "Avx512" : "Avx2";
                         });

// Narrow, untransposed products where the processor allows, with b padded to whole vectors
// within 1 MiB: a dot product of 2^23 elements would pad b to 512 MiB.
TEST(NarrowGemmChoiceTest, TakesNarrowUntransposedProductsOfBoundedB) {
  const float x = 1;
  const bool runs =
      narrow_gemm_runs(NarrowGemmIsa::Avx512) || narrow_gemm_runs(NarrowGemmIsa::Avx2);
  EXPECT_EQ(narrow_gemm_takes({&x, false, 1}, {&x, false, 32}, 128, 32), runs);
  EXPECT_EQ(narrow_gemm_takes({&x, false, 1}, {&x, false, 1}, 16384, 1), runs);
  EXPECT_FALSE(narrow_gemm_takes({&x, false, 1}, {&x, false, 1}, int64_t{1} << 23, 1));
  EXPECT_FALSE(narrow_gemm_takes({&x, false, 1}, {&x, false, 33}, 128, 33));
  EXPECT_FALSE(narrow_gemm_takes({&x, true, 1}, {&x, false, 16}, 128, 16));
  EXPECT_FALSE(narrow_gemm_takes({&x, false, 1}, {&x, true, 1}, 128, 16));
}

}  // namespace
}  // namespace lz::runtime
