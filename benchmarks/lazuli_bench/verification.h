// Checking a result against the hand-written loop's.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace lazuli_bench {

/// The relative tolerance for float32 results.
inline constexpr double kRelativeTolerance = 1e-3;

struct Comparison {
  bool matches = false;
  double max_relative_error = 0;  // the worst element's
  int64_t worst_index = -1;
  std::string problem;  // set when the sizes differ or a value is not finite
};

/// Element i matches when |actual_i - expected_i| <= tolerance * max(|expected_i|, 0.01 * max|e|):
/// elements near zero (a layer norm's centred values, which cancel) are judged on a hundredth of
/// the result's scale rather than on their own tiny magnitude, which float32 rounding of the
/// inputs alone can miss by more than the tolerance. NaN never matches.
Comparison compare(const std::vector<float>& actual, const std::vector<float>& expected,
                   double tolerance = kRelativeTolerance);

/// "ok (max rel err 3.1e-07)" or "MISMATCH: max rel err 0.25 at element 17 (got 1.5, want 2)".
std::string describe(const Comparison& comparison, const std::vector<float>& actual,
                     const std::vector<float>& expected);

}  // namespace lazuli_bench
