// The random suite: float32 normal numbers, `lz::random_normal({n}, seed)` waited for, against a
// hand-written OpenMP loop over the reference's scalar function (the same numbers: the check is
// exact to the tolerance), numpy's Generator.standard_normal, torch.randn and jax.random.normal
// (jitted), whose numbers are their own: their check is the sample's mean and deviation.
#include <omp.h>

#include <cmath>
#include <string>
#include <vector>

#include "experiment.h"
#include "peer_reference.h"
#include "reference/counter_rng.h"
#include "suite.h"
#include "timing.h"

namespace lazuli_bench {
namespace {

constexpr uint64_t kSeed = 7;

/// "ok (mean 0.0001, deviation 0.9999)" when the sample looks standard normal, else a MISMATCH.
void check_moments(Row& row, const std::vector<float>& values, int64_t expected_size) {
  double total = 0;
  double squares = 0;
  for (const float v : values) {
    total += v;
    squares += static_cast<double>(v) * v;
  }
  const auto n = static_cast<double>(values.size());
  const double mean = total / n;
  const double deviation = std::sqrt(squares / n - mean * mean);
  const bool ok = static_cast<int64_t>(values.size()) == expected_size && std::abs(mean) < 0.01 &&
                  std::abs(deviation - 1) < 0.01;
  row.check = std::string(ok ? "ok" : "MISMATCH:") + format(" (mean %.4f", mean) +
              format(", deviation %.4f)", deviation);
  row.mismatch = !ok;
}

class RandomSuite : public Suite {
 public:
  std::string_view name() const override { return "random"; }
  std::string_view description() const override {
    return "float32 normal numbers: lz::random_normal vs a hand loop over the same function, "
           "numpy, torch.randn and jax.random.normal; size = elements";
  }
  std::vector<std::string> workload_lines() const override {
    return {"normal: random_normal({n}, seed), Box-Muller on counter-based bits"};
  }
  std::vector<Size> default_sizes() const override { return {{"16M", int64_t{1} << 24}}; }

  void run(const Options& options, Report& report) override {
    if (!options.workloads.empty() && std::find(options.workloads.begin(), options.workloads.end(),
                                                "normal") == options.workloads.end()) {
      return;
    }
    report.section("random: median of " + std::to_string(options.repeat) + " runs, " +
                   std::to_string(thread_count()) + " threads; x hand = time / the hand loop's");
    const Runs runs{options.warmup, options.repeat};
    for (const Size& size : options.sizes.empty() ? default_sizes() : options.sizes) {
      const int64_t n = size.elements;
      const std::string shape = "(" + std::to_string(n) + ")";
      const int64_t bytes = n * 4;
      std::vector<Row> rows;

      std::vector<float> hand(n);
      const Timing hand_timing = time_runs(runs, [&] {
        const Stopwatch stopwatch;
#pragma omp parallel for schedule(static)
        for (int64_t i = 0; i < n; ++i) {
          hand[i] = static_cast<float>(
              lz::reference::normal_element(kSeed, static_cast<uint64_t>(i), 0.0, 1.0));
        }
        return stopwatch.milliseconds();
      });
      Row hand_row =
          timed_row("random", "normal", size.label, shape, "hand (omp)", hand_timing, bytes);
      hand_row.kernels_per_run.reset();
      check_moments(hand_row, hand, n);
      rows.push_back(std::move(hand_row));

      std::vector<float> drawn;
      const Timing timing = time_runs(runs, [&] {
        const Stopwatch stopwatch;
        const lz::Tensor values = lz::random_normal({n}, kSeed);
        values.wait_to_read();
        const double milliseconds = stopwatch.milliseconds();
        drawn = values.to_vector<float>();
        return milliseconds;
      });
      Row row = timed_row("random", "normal", size.label, shape, "lazuli", timing, bytes);
      check(row, drawn, hand, "the hand loop's numbers");
      rows.push_back(std::move(row));

      if (options.numpy && !options.python.empty()) {
        Problem problem;
        problem.inputs.push_back({"shape", {n}});
        const std::vector<std::vector<float>> data{std::vector<float>(n)};
        for (const char* framework : {"numpy", "torch", "jax"}) {
          const PeerRun peer = run_peer(options.python, framework, "normal", problem, data,
                                        runs.warmup, runs.repeat, thread_count());
          Row peer_row = timed_row("random", "normal", size.label, shape, framework, {}, bytes);
          peer_row.median_ms = peer.median_ms;
          peer_row.kernels_per_run.reset();
          if (peer.median_ms) {
            check_moments(peer_row, peer.output, n);
          } else {
            peer_row.check = peer.problem;
          }
          rows.push_back(std::move(peer_row));
        }
      }
      set_reference(rows, rows.front());
      for (Row& r : rows) report.add(std::move(r));
    }
    report.note(
        "lazuli and the hand loop draw the same numbers (Box-Muller on SplitMix64 bits, "
        "reference/counter_rng.h); numpy (default_rng), torch.randn and jax.random.normal draw "
        "their own, checked by the sample's mean and deviation");
  }
};

}  // namespace

std::unique_ptr<Suite> make_random_suite() { return std::make_unique<RandomSuite>(); }

}  // namespace lazuli_bench
