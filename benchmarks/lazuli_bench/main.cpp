// lazuli-bench: lazuli against a hand-written OpenMP loop, Eigen and numpy, suite by suite.
// Run: build/release/benchmarks/lazuli_bench/lazuli-bench --help
#include <omp.h>

#include <fstream>
#include <iostream>

#include "options.h"
#include "peer_reference.h"
#include "plot.h"
#include "suite.h"
#include "timing.h"

namespace lazuli_bench {
namespace {

void list_suites(const std::vector<std::unique_ptr<Suite>>& suites) {
  for (const auto& suite : suites) {
    std::cout << suite->name() << ": " << suite->description() << "\n  default sizes:";
    for (const Size& size : suite->default_sizes()) std::cout << " " << size.label;
    std::cout << "\n";
    for (const std::string& line : suite->workload_lines()) std::cout << "  " << line << "\n";
  }
}

std::vector<Suite*> selected_suites(const Options& options,
                                    const std::vector<std::unique_ptr<Suite>>& suites) {
  std::vector<Suite*> selected;
  for (const std::string& wanted : options.suites) {
    bool found = false;
    for (const auto& suite : suites) {
      if (wanted == "all" || wanted == suite->name()) {
        selected.push_back(suite.get());
        found = true;
      }
    }
    if (!found) throw UsageError("--suite: no suite '" + wanted + "' (see --list)");
  }
  return selected;
}

int run(int argc, char** argv) {
  const Options options = parse_options(argc, argv);
  if (!options.memory_child.empty()) return run_memory_child(options.memory_child);
  if (options.help) {
    std::cout << usage();
    return 0;
  }
  const std::vector<std::unique_ptr<Suite>> suites = make_suites();
  if (options.list) {
    list_suites(suites);
    return 0;
  }
  const std::vector<Suite*> selected = selected_suites(options, suites);

  omp_set_num_threads(thread_count());
  std::cout << "lazuli-bench: " << thread_count() << " threads (LZ_NUM_THREADS or the hardware), "
            << "eigen "
            <<
#ifdef LAZULI_BENCH_HAVE_EIGEN
      "yes"
#else
      "no (not found at configure time)"
#endif
            << ", numpy "
            << (!options.numpy                    ? "off"
                : numpy_available(options.python) ? "yes"
                                                  : "not installed")
            << "\n";

  Report report(std::cout);
  for (Suite* suite : selected) suite->run(options, report);

  if (!options.json_path.empty()) {
    std::ofstream json(options.json_path);
    report.write_json(json);
    if (!json) {
      std::cerr << "lazuli-bench: cannot write " << options.json_path << "\n";
      return 3;
    }
  }
  if (!options.plot_path.empty()) {
    std::ofstream plot(options.plot_path);
    write_svg_plot(report.rows(),
                   "lazuli-bench: median time per run, " + std::to_string(thread_count()) +
                       " threads (log scale; shorter is faster)",
                   plot);
    if (!plot) {
      std::cerr << "lazuli-bench: cannot write " << options.plot_path << "\n";
      return 3;
    }
  }
  if (report.has_mismatch()) {
    std::cerr << "\nlazuli-bench: MISMATCH: some results differ from the hand-written loop's by "
                 "more than the relative tolerance (see the rows marked MISMATCH)\n";
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace lazuli_bench

int main(int argc, char** argv) {
  try {
    return lazuli_bench::run(argc, argv);
  } catch (const lazuli_bench::UsageError& error) {
    std::cerr << "lazuli-bench: " << error.what() << "\n";
    return 2;
  } catch (const std::exception& error) {  // lz::Error included
    std::cerr << "lazuli-bench: " << error.what() << "\n";
    return 3;
  }
}
