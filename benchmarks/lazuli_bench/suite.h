// A suite is one family of comparisons (fusion, async, cuda), each in its own file, listed in
// suites.cpp.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "options.h"
#include "report.h"

namespace lazuli_bench {

class Suite {
 public:
  virtual ~Suite() = default;
  /// The name --suite selects it by.
  virtual std::string_view name() const = 0;
  /// One line for --list.
  virtual std::string_view description() const = 0;
  /// "name: expression" per workload, for --list.
  virtual std::vector<std::string> workload_lines() const = 0;
  /// Sizes used when --sizes is not given.
  virtual std::vector<Size> default_sizes() const = 0;
  /// Measures every selected workload and size, adding rows to `report` as it goes.
  virtual void run(const Options& options, Report& report) = 0;
};

/// Every suite this build has, in the order `--suite all` runs them.
std::vector<std::unique_ptr<Suite>> make_suites();

// One factory per suite file.
std::unique_ptr<Suite> make_fusion_suite();
std::unique_ptr<Suite> make_async_suite();
std::unique_ptr<Suite> make_cuda_suite();
std::unique_ptr<Suite> make_train_suite();
std::unique_ptr<Suite> make_gemm_suite();
std::unique_ptr<Suite> make_memory_suite();
std::unique_ptr<Suite> make_random_suite();

/// The memory suite's lazuli process (--memory-child OPTIMIZER:STEPS): runs the steps and prints
/// their figures; returns the exit status.
int run_memory_child(const std::string& optimizer_and_steps);

}  // namespace lazuli_bench
