// How a suite measures and reports a variant: lazuli's fusion setting for a scope, the runs timed
// with the kernels they launch, the variant's row and its check, and the workloads --workloads
// selects. The async and cuda suites use all of it, the fusion suite what it needs.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "options.h"
#include "report.h"

namespace lazuli_bench {

/// Sets lz::set_fusion for a scope. lazuli has no getter for the setting, so the scope ends by
/// restoring the default, fusion on.
class ScopedFusion {
 public:
  explicit ScopedFusion(bool enabled);
  ~ScopedFusion();
  ScopedFusion(const ScopedFusion&) = delete;
  ScopedFusion& operator=(const ScopedFusion&) = delete;
};

/// How often a variant runs: `warmup` times untimed, then `repeat` times timed.
struct Runs {
  int warmup = 1;
  int repeat = 1;
};

/// The median of a variant's runs and the kernels lazuli launched per run.
struct Timing {
  double median_ms = 0;
  double kernels_per_run = 0;
};

/// Times `timed_run` as median_milliseconds does, and counts the kernels lazuli launched over all
/// the runs, warm-up included. Each run must finish its work before it returns, so that the
/// counters are complete.
Timing time_runs(const Runs& runs, const std::function<double()>& timed_run);

/// `pattern` (one printf conversion of a double) filled with `value`.
std::string format(const char* pattern, double value);

/// A row of `suite`'s `workload` with `timing`'s median and kernels per run; `bytes` is what its
/// GB/s column counts.
Row timed_row(const std::string& suite, const std::string& workload, const std::string& size,
              const std::string& shape, const std::string& variant, const Timing& timing,
              int64_t bytes);

/// Fills the row's check from comparing `actual` with `expected`; `remark` follows an "ok".
void check(Row& row, const std::vector<float>& actual, const std::vector<float>& expected,
           const std::string& remark = "");

/// Makes every row of an experiment report its time relative to `reference`'s.
void set_reference(std::vector<Row>& rows, const Row& reference);

/// Microseconds per iteration of a loop of `iterations` that took `milliseconds`.
double per_iteration_us(double milliseconds, int64_t iterations);

/// Whether --suite names `suite` itself, not only through "all".
bool suite_named(const Options& options, std::string_view suite);

/// The entries of `all` that --workloads names, in its order (every entry when it names none). A
/// name no entry has is a UsageError naming `suite` when `unknown_is_error`; otherwise it is
/// skipped, as one that belongs to another suite under --suite all.
template <typename Entry>
std::vector<const Entry*> select_by_name(const std::vector<Entry>& all, const Options& options,
                                         const std::string& suite, bool unknown_is_error) {
  std::vector<const Entry*> selected;
  for (const Entry& entry : all) {
    if (options.workloads.empty()) selected.push_back(&entry);
  }
  for (const std::string& wanted : options.workloads) {
    const auto found = std::find_if(all.begin(), all.end(),
                                    [&](const Entry& entry) { return wanted == entry.name; });
    if (found != all.end()) {
      selected.push_back(&*found);
    } else if (unknown_is_error) {
      throw UsageError("--workloads: no " + suite + " workload '" + wanted + "'");
    }
  }
  return selected;
}

/// "name: description" per experiment, for --list.
template <typename Experiment>
std::vector<std::string> experiment_lines(const std::vector<Experiment>& experiments) {
  std::vector<std::string> lines;
  for (const Experiment& experiment : experiments) {
    lines.push_back(std::string(experiment.name) + ": " + experiment.description);
  }
  return lines;
}

}  // namespace lazuli_bench
