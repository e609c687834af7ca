// The fusion suite: each workload at each size, timed as lazuli fused, lazuli unfused, the
// hand-written OpenMP loop, Eigen, numpy and (--peers) JAX, PyTorch and Dr.Jit; every result
// checked against the hand-written loop's.
#include "compile_time.h"
#include "experiment.h"
#include "peer_reference.h"
#include "suite.h"
#include "timing.h"
#include "workloads.h"

namespace lazuli_bench {
namespace {

class FusionSuite : public Suite {
 public:
  std::string_view name() const override { return "fusion"; }
  std::string_view description() const override {
    return "fused lazuli vs unfused lazuli vs a hand-written OpenMP loop, Eigen, numpy and, with "
           "--peers, JAX, PyTorch and Dr.Jit";
  }
  std::vector<std::string> workload_lines() const override {
    std::vector<std::string> lines;
    for (const Workload& workload : fusion_workloads()) {
      lines.push_back(std::string(workload.name) + ": " + workload.expression);
    }
    return lines;
  }
  std::vector<Size> default_sizes() const override { return {{"1M", 1 << 20}, {"16M", 1 << 24}}; }

  void run(const Options& options, Report& report) override {
    const std::vector<const Workload*> workloads =
        select_by_name(fusion_workloads(), options, "fusion", /*unknown_is_error=*/true);
    const std::vector<Size> sizes = options.sizes.empty() ? default_sizes() : options.sizes;
    const ScopedFusion fused(true);
    if (options.compile_time) {
      report.section("fusion: compile time, first vs second evaluation of a new graph shape (" +
                     std::to_string(kCompileTimeElements) + " elements)");
      measure_compile_time(std::string(name()), workloads, report);
    }
    report.section("fusion: median of " + std::to_string(options.repeat) + " runs after " +
                   std::to_string(options.warmup) + " warm-up, " + std::to_string(thread_count()) +
                   " threads; GB/s from inputs read once + output written once; x hand = time / "
                   "hand-written loop's time");
    for (const Workload* workload : workloads) {
      for (const Size& size : sizes) measure(*workload, size, options, report);
    }
  }

 private:
  void measure(const Workload& workload, const Size& size, const Options& options,
               Report& report) const {
    const Problem problem = workload.problem(size.elements);
    std::vector<std::vector<float>> data;
    std::vector<const float*> pointers;
    for (size_t i = 0; i < problem.inputs.size(); ++i) {
      data.push_back(random_input(problem.inputs[i], i + 1));
      pointers.push_back(data.back().data());
    }
    const auto output_size = static_cast<size_t>(lz::shape_size(problem.output));
    Row base;
    base.suite = name();
    base.workload = workload.name;
    base.size = size.label;
    base.shape = problem.shape_label;
    base.minimal_bytes = problem.minimal_bytes();
    auto time_reference = [&](Reference reference, std::vector<float>& output) {
      return median_milliseconds(options.warmup, options.repeat, [&] {
        const Stopwatch stopwatch;
        reference(problem, pointers, output.data());
        return stopwatch.milliseconds();
      });
    };

    std::vector<float> expected(output_size);
    Row hand = base;
    hand.variant = "hand (omp)";
    hand.median_ms = time_reference(workload.hand, expected);
    hand.hand_ms = hand.median_ms;
    hand.check = "reference";
    report.add(hand);
    base.hand_ms = hand.median_ms;

    const std::vector<lz::Tensor> inputs = lazuli_inputs(problem, data);
    std::vector<Row> lazuli_rows;  // fused, then unfused
    for (const bool fusion : {true, false}) {
      const ScopedFusion setting(fusion);
      lz::Tensor last;
      Row row = base;
      row.variant = fusion ? "lazuli fused" : "lazuli unfused";
      const Timing timing = time_runs({options.warmup, options.repeat}, [&] {
        const Stopwatch stopwatch;
        lz::Tensor result = workload.build(inputs);
        result.wait_to_read();
        const double milliseconds = stopwatch.milliseconds();
        last = std::move(result);  // frees the previous result outside the clock
        return milliseconds;
      });
      row.median_ms = timing.median_ms;
      row.kernels_per_run = timing.kernels_per_run;
      check(row, last.to_vector<float>(), expected);
      lazuli_rows.push_back(std::move(row));
    }
    // Fusion must never cost time: a fused run slower than the unfused one is flagged, beyond the
    // tenth by which two medians of one kernel differ on a shared machine (sum: one kernel both
    // ways, 2.25 and 2.41 ms in one run).
    if (*lazuli_rows[0].median_ms > 1.1 * *lazuli_rows[1].median_ms) {
      lazuli_rows[0].check += "; SLOWER THAN UNFUSED";
    }
    for (Row& row : lazuli_rows) report.add(std::move(row));
    if (workload.build_one_line != nullptr) {
      lz::Tensor last;
      Row row = base;
      row.variant = "lazuli one-liner";
      const int64_t allocated = lz::stats().bytes_allocated;
      const Timing timing = time_runs({options.warmup, options.repeat}, [&] {
        const Stopwatch stopwatch;
        lz::Tensor result = workload.build_one_line(inputs);
        const double milliseconds = stopwatch.milliseconds();
        last = std::move(result);
        return milliseconds;
      });
      const int64_t runs = options.warmup + options.repeat;
      const int64_t bytes_per_run =
          (lz::stats().bytes_allocated - allocated) / std::max<int64_t>(1, runs);
      row.median_ms = timing.median_ms;
      row.kernels_per_run = timing.kernels_per_run;
      check(row, last.to_vector<float>(), expected,
            "waited inside the expression; " + std::to_string(bytes_per_run / (1 << 20)) +
                " MiB allocated per run");
      report.add(std::move(row));
    }

    if (workload.eigen != nullptr) {
      std::vector<float> output(output_size);
      Row row = base;
      row.variant = "eigen";
      row.median_ms = time_reference(workload.eigen, output);
      check(row, output, expected);
      report.add(std::move(row));
    }

    std::vector<std::string> frameworks;
    if (options.numpy) frameworks.push_back("numpy");
    if (options.peers) {
      frameworks.insert(frameworks.end(), peer_frameworks().begin(), peer_frameworks().end());
    }
    for (const std::string& framework : frameworks) {
      Row row = base;
      row.variant = framework;
      const PeerRun run = run_peer(options.python, framework, workload.name, problem, data,
                                   options.warmup, options.repeat, thread_count());
      row.median_ms = run.median_ms;
      if (run.median_ms) {
        check(row, run.output, expected);
      } else {
        row.check = run.problem;
      }
      report.add(std::move(row));
    }
  }
};

}  // namespace

std::unique_ptr<Suite> make_fusion_suite() { return std::make_unique<FusionSuite>(); }

}  // namespace lazuli_bench
