#include "experiment.h"

#include <algorithm>
#include <cstdio>

#include <lazuli/settings.h>
#include <lazuli/stats.h>

#include "timing.h"
#include "verification.h"

namespace lazuli_bench {

ScopedFusion::ScopedFusion(bool enabled) { lz::set_fusion(enabled); }

ScopedFusion::~ScopedFusion() { lz::set_fusion(true); }

Timing time_runs(const Runs& runs, const std::function<double()>& timed_run) {
  const lz::Stats before = lz::stats();
  Timing timing;
  timing.median_ms = median_milliseconds(runs.warmup, runs.repeat, timed_run);
  const lz::Stats counted = stats_difference(lz::stats(), before);
  timing.kernels_per_run = static_cast<double>(counted.kernels_launched) /
                           static_cast<double>(runs.warmup + runs.repeat);
  return timing;
}

std::string format(const char* pattern, double value) {
  char text[96];
  std::snprintf(text, sizeof(text), pattern, value);
  return text;
}

Row timed_row(const std::string& suite, const std::string& workload, const std::string& size,
              const std::string& shape, const std::string& variant, const Timing& timing,
              int64_t bytes) {
  Row row;
  row.suite = suite;
  row.workload = workload;
  row.size = size;
  row.shape = shape;
  row.variant = variant;
  row.median_ms = timing.median_ms;
  row.kernels_per_run = timing.kernels_per_run;
  row.minimal_bytes = bytes;
  return row;
}

void check(Row& row, const std::vector<float>& actual, const std::vector<float>& expected,
           const std::string& remark) {
  const Comparison comparison = compare(actual, expected);
  row.check = describe(comparison, actual, expected);
  row.mismatch = !comparison.matches;
  if (comparison.matches && !remark.empty()) row.check += "; " + remark;
}

void set_reference(std::vector<Row>& rows, const Row& reference) {
  for (Row& row : rows) row.hand_ms = reference.median_ms;
}

double per_iteration_us(double milliseconds, int64_t iterations) {
  return milliseconds * 1e3 / static_cast<double>(iterations);
}

bool suite_named(const Options& options, std::string_view suite) {
  return std::find(options.suites.begin(), options.suites.end(), suite) != options.suites.end();
}

}  // namespace lazuli_bench
