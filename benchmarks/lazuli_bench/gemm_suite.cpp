// The gemm suite: lazuli's float32 matrix products against this machine's float32 FMA peak,
// measured here on the same threads. The products are those the fusion suite's mlp and the train
// suite's wide model spend their time in. Each result is checked on sampled elements against
// sums in double precision.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include <lazuli/lazuli.h>

#include "experiment.h"
#include "suite.h"
#include "timing.h"

namespace lazuli_bench {
namespace {

struct Product {
  const char* name;
  const char* description;  // for --list
  int64_t m, k, n;
};

const std::vector<Product>& products() {
  static const std::vector<Product> all = {
      {"mlp_hidden", "(131072,128) x (128,128): the fusion suite's mlp at 16M, first layer", 131072,
       128, 128},
      {"mlp_logits", "(131072,128) x (128,16): its narrow second layer", 131072, 128, 16},
      {"wide_input", "(512,784) x (784,1024): the train suite's wide model, first layer", 512, 784,
       1024},
      {"wide_hidden", "(512,1024) x (1024,1024): its second layer", 512, 1024, 1024},
  };
  return all;
}

// The widest vector the compiler targets (-march=native), as GCC's vector extension.
#if defined(__AVX512F__)
constexpr int kLanes = 16;
#elif defined(__AVX__)
constexpr int kLanes = 8;
#else
constexpr int kLanes = 4;
#endif
typedef float Vector __attribute__((vector_size(kLanes * sizeof(float))));
// Independent multiply-add chains per thread: enough to cover an FMA's latency (4 cycles) on two
// pipes, few enough to stay in registers.
constexpr int kChains = 10;

/// Multiply-adds `rounds` times on each of kChains vectors; returns a value that depends on all
/// of them, so that none is optimized away.
float fma_chains(int64_t rounds) {
  Vector chains[kChains];
  for (int c = 0; c < kChains; ++c) chains[c] = Vector{} + 1.0f + 1e-3f * static_cast<float>(c);
  const Vector scale = Vector{} + 0.999999f;
  const Vector shift = Vector{} + 1e-6f;
  for (int64_t r = 0; r < rounds; ++r) {
    for (int c = 0; c < kChains; ++c) chains[c] = chains[c] * scale + shift;
  }
  float total = 0;
  for (int c = 0; c < kChains; ++c) {
    for (int lane = 0; lane < kLanes; ++lane) total += chains[c][lane];
  }
  return total;
}

/// This machine's float32 FMA throughput on `threads` threads, in GFLOP/s (a multiply-add is
/// two): the best of five runs of about 50 ms.
double fma_peak_gflops(int threads) {
  constexpr int64_t kRounds = 20'000'000;
  double best = 0;
  for (int run = 0; run < 5; ++run) {
    std::vector<float> sinks(threads);
    const Stopwatch stopwatch;
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&sinks, t] { sinks[t] = fma_chains(kRounds); });
    }
    for (std::thread& worker : workers) worker.join();
    const double seconds = stopwatch.milliseconds() / 1e3;
    const double flops = 2.0 * kRounds * kChains * kLanes * threads;
    best = std::max(best, flops / seconds / 1e9);
    // Keeps the chains' results observable.
    if (std::isnan(sinks[0])) std::fprintf(stderr, "gemm: the FMA chains gave NaN\n");
  }
  return best;
}

class GemmSuite : public Suite {
 public:
  std::string_view name() const override { return "gemm"; }
  std::string_view description() const override {
    return "lazuli's float32 matmuls against this machine's float32 FMA peak, measured on the "
           "same threads";
  }
  std::vector<std::string> workload_lines() const override { return experiment_lines(products()); }
  std::vector<Size> default_sizes() const override { return {{"fixed", 0}}; }

  void run(const Options& options, Report& report) override {
    const std::vector<const Product*> selected =
        select_by_name(products(), options, "gemm", suite_named(options, "gemm"));
    if (selected.empty()) return;
    const double peak = fma_peak_gflops(thread_count());
    report.section("gemm: median of " + std::to_string(options.repeat) + " runs after " +
                   std::to_string(options.warmup) + " warm-up, " + std::to_string(thread_count()) +
                   " threads; x hand = time / the time of the product's multiply-adds at the FMA "
                   "peak");
    for (const Product* product : selected) report.add(measure(*product, peak, options));
    char note[160];
    std::snprintf(note, sizeof(note),
                  "FMA peak: %.1f GFLOP/s on %d threads (%d-lane vector multiply-adds, %d chains "
                  "per thread, best of 5)",
                  peak, thread_count(), kLanes, kChains);
    report.note(note);
  }

 private:
  static Row measure(const Product& product, double peak_gflops, const Options& options) {
    const lz::Tensor a = lz::random_normal({product.m, product.k}, 1);
    const lz::Tensor b = lz::random_normal({product.k, product.n}, 2);
    lz::waitall();
    lz::Tensor result;
    const Timing timing = time_runs({options.warmup, options.repeat}, [&] {
      const Stopwatch stopwatch;
      lz::Tensor product_value = lz::matmul(a, b);
      product_value.wait_to_read();
      const double milliseconds = stopwatch.milliseconds();
      result = std::move(product_value);  // frees the previous result outside the clock
      return milliseconds;
    });
    const double flops = 2.0 * product.m * product.k * product.n;
    Row row;
    row.suite = "gemm";
    row.workload = product.name;
    row.size = "fixed";
    char shape[64];
    std::snprintf(shape, sizeof(shape), "(%lld,%lld)x(%lld,%lld)",
                  static_cast<long long>(product.m), static_cast<long long>(product.k),
                  static_cast<long long>(product.k), static_cast<long long>(product.n));
    row.shape = shape;
    row.variant = "lazuli";
    row.median_ms = timing.median_ms;
    row.kernels_per_run = timing.kernels_per_run;
    row.minimal_bytes = 4 * (product.m * product.k + product.k * product.n + product.m * product.n);
    row.hand_ms = flops / (peak_gflops * 1e6);
    row.check = check_sampled(product, a, b, result);
    row.mismatch = row.check != "ok";
    char rate[96];
    std::snprintf(rate, sizeof(rate), "; %.1f GFLOP/s, %.0f%% of the FMA peak",
                  flops / (timing.median_ms * 1e6), 100 * *row.hand_ms / timing.median_ms);
    row.check += rate;
    return row;
  }

  /// 256 elements of `result` against their sums in double precision, within 1e-5 of the sum
  /// of the products' magnitudes (float32 sums in another order).
  static std::string check_sampled(const Product& product, const lz::Tensor& a, const lz::Tensor& b,
                                   const lz::Tensor& result) {
    const std::vector<float> av = a.to_vector<float>();
    const std::vector<float> bv = b.to_vector<float>();
    const std::vector<float> got = result.to_vector<float>();
    for (int sample = 0; sample < 256; ++sample) {
      // Spread over rows and columns, corners included.
      const int64_t i = sample * (product.m - 1) / 255;
      const int64_t j = (sample * 7919) % product.n;
      double sum = 0, magnitude = 0;
      for (int64_t l = 0; l < product.k; ++l) {
        const double term = double{av[i * product.k + l]} * bv[l * product.n + j];
        sum += term;
        magnitude += std::abs(term);
      }
      const double value = got[i * product.n + j];
      if (!(std::abs(value - sum) <= 1e-5 * magnitude)) {
        char text[128];
        std::snprintf(text, sizeof(text), "MISMATCH at (%lld,%lld): %g, in double %g",
                      static_cast<long long>(i), static_cast<long long>(j), value, sum);
        return text;
      }
    }
    return "ok";
  }
};

}  // namespace

std::unique_ptr<Suite> make_gemm_suite() { return std::make_unique<GemmSuite>(); }

}  // namespace lazuli_bench
