#include "verification.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace lazuli_bench {

Comparison compare(const std::vector<float>& actual, const std::vector<float>& expected,
                   double tolerance) {
  Comparison comparison;
  if (actual.size() != expected.size()) {
    comparison.problem = "got " + std::to_string(actual.size()) + " elements, want " +
                         std::to_string(expected.size());
    return comparison;
  }
  double scale = 0;
  for (const float value : expected) scale = std::max(scale, std::abs(static_cast<double>(value)));
  const double floor = 1e-2 * scale;
  for (size_t i = 0; i < actual.size(); ++i) {
    const double got = actual[i];
    const double want = expected[i];
    const double error = std::abs(got - want) / std::max({std::abs(want), floor, 1e-30});
    // The negated comparison also catches NaN.
    if (!(error <= comparison.max_relative_error)) {
      comparison.max_relative_error = std::isnan(error) ? INFINITY : error;
      comparison.worst_index = static_cast<int64_t>(i);
    }
  }
  comparison.matches = comparison.max_relative_error <= tolerance;
  return comparison;
}

std::string describe(const Comparison& comparison, const std::vector<float>& actual,
                     const std::vector<float>& expected) {
  if (!comparison.problem.empty()) return "MISMATCH: " + comparison.problem;
  char text[160];
  if (comparison.matches) {
    std::snprintf(text, sizeof(text), "ok (max rel err %.1e)", comparison.max_relative_error);
  } else {
    const auto i = static_cast<size_t>(comparison.worst_index);
    std::snprintf(text, sizeof(text), "MISMATCH: max rel err %.2g at element %zu (got %g, want %g)",
                  comparison.max_relative_error, i, actual[i], expected[i]);
  }
  return text;
}

}  // namespace lazuli_bench
