// The memory suite: Adam and SGD steps of an MLP 2048-4096-4096-4096-10 at batch 256 (160 MiB of
// float32 parameters), each framework in a process of its own: lazuli (this program again, with
// --memory-child), lazuli's Python package, PyTorch and JAX (training_memory.py, where the
// interpreter imports them). Each reports the peak growth of its resident memory over the steps,
// as a multiple of the parameters' bytes (Adam needs the parameters, their gradients and two
// moments: 4x; SGD 2x), and each step's time, one barrier per step.
#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "experiment.h"
#include "peer_reference.h"
#include "suite.h"
#include "timing.h"

namespace lazuli_bench {
namespace {

const std::vector<int64_t> kLayers{2048, 4096, 4096, 4096, 10};
constexpr int64_t kBatch = 256;
constexpr double kRate = 1e-3;
constexpr int64_t kDefaultSteps = 8;

int64_t parameter_bytes() {
  int64_t elements = 0;
  for (size_t l = 0; l + 1 < kLayers.size(); ++l) {
    elements += kLayers[l] * kLayers[l + 1] + kLayers[l + 1];
  }
  return elements * 4;
}

/// VmRSS or VmHWM of this process, in bytes (0 where /proc does not say).
int64_t resident_bytes(const std::string& field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::stoll(line.substr(field.size() + 1)) * 1024;
  }
  return 0;
}

/// Minor page faults of this process so far: each is a page of fresh memory touched.
int64_t minor_page_faults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

/// What one framework's process printed: training_memory.py's lines.
struct Figures {
  int64_t peak_growth_bytes = 0;
  std::vector<double> step_seconds;
  std::vector<double> losses;
  std::vector<double> page_faults;  // minor page faults of each step (fresh memory touched)
};

std::optional<Figures> parse_figures(const std::string& output) {
  Figures figures;
  bool peak_seen = false;
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string name;
    words >> name;
    double value = 0;
    if (name == "peak_growth_bytes" && words >> value) {
      figures.peak_growth_bytes = static_cast<int64_t>(value);
      peak_seen = true;
    }
    while (name == "step_seconds" && words >> value) figures.step_seconds.push_back(value);
    while (name == "losses" && words >> value) figures.losses.push_back(value);
    while (name == "page_faults" && words >> value) figures.page_faults.push_back(value);
  }
  if (!peak_seen || figures.step_seconds.empty()) return std::nullopt;
  return figures;
}

/// The steps of the suite in this process, printed as training_memory.py prints them.
void lazuli_steps(const std::string& optimizer, int64_t steps) {
  const lz::Tensor x = lz::random_normal({kBatch, kLayers[0]}, 1);
  std::vector<float> label_values;
  for (int64_t i = 0; i < kBatch; ++i) label_values.push_back(static_cast<float>(i % 10));
  const lz::Tensor labels = lz::from_vector(label_values, {kBatch}).astype(lz::int64);
  lz::eval_async({x, labels});
  lz::waitall();
  const int64_t baseline = resident_bytes("VmRSS");
  std::ofstream("/proc/self/clear_refs") << "5";  // VmHWM starts over from VmRSS
  std::vector<lz::Tensor> params;
  for (size_t l = 0; l + 1 < kLayers.size(); ++l) {
    params.push_back(lz::nn::glorot_uniform({kLayers[l], kLayers[l + 1]}, 7 + l));
    params.push_back(lz::zeros({kLayers[l + 1]}));
  }
  lz::eval_async(params);
  lz::waitall();
  lz::optim::Adam adam({.learning_rate = kRate});
  lz::optim::SGD sgd({.learning_rate = kRate});
  std::vector<double> seconds, losses, page_faults;
  for (int64_t step = 0; step < steps; ++step) {
    const Stopwatch stopwatch;
    const int64_t faults_before = minor_page_faults();
    auto [loss, grads] = lz::value_and_grad(
        [&](const std::vector<lz::Tensor>& p) {
          return lz::cross_entropy(lz::nn::mlp(p, x), labels);
        },
        params);
    if (optimizer == "adam") {
      adam.step(params, grads);
    } else {
      sgd.step(params, grads);
    }
    grads.clear();
    losses.push_back(loss.item<float>());
    seconds.push_back(stopwatch.milliseconds() / 1e3);
    page_faults.push_back(static_cast<double>(minor_page_faults() - faults_before));
  }
  std::printf("peak_growth_bytes %lld\nstep_seconds",
              static_cast<long long>(resident_bytes("VmHWM") - baseline));
  for (const double s : seconds) std::printf(" %.6f", s);
  std::printf("\nlosses");
  for (const double l : losses) std::printf(" %.6f", l);
  std::printf("\npage_faults");
  for (const double f : page_faults) std::printf(" %.0f", f);
  std::printf("\n");
}

/// The median of the steps after the first half: the steady step.
double steady_step_seconds(std::vector<double> seconds) {
  seconds.erase(seconds.begin(), seconds.begin() + static_cast<long>(seconds.size() / 2));
  std::sort(seconds.begin(), seconds.end());
  return seconds[seconds.size() / 2];
}

Row figures_row(const std::string& optimizer, int64_t steps, const std::string& variant,
                const ProcessResult& run) {
  Row row;
  row.suite = "memory";
  row.workload = optimizer;
  row.size = std::to_string(steps);
  row.shape = "MLP 2048-4096-4096-4096-10 x 256";
  row.variant = variant;
  if (run.exit_status == 3) {
    row.check = "not installed";
    return row;
  }
  const std::optional<Figures> figures = parse_figures(run.output);
  if (run.exit_status != 0 || !figures) {
    row.check = std::string(variant == "lazuli" ? "MISMATCH: " : "") +
                (run.exit_status == 0 ? "printed no figures" : "crashed or failed");
    row.mismatch = variant == "lazuli";  // a peer that fails is the peer's problem
    return row;
  }
  row.median_ms = steady_step_seconds(figures->step_seconds) * 1e3;
  const bool finite = std::all_of(figures->losses.begin(), figures->losses.end(),
                                  [](double loss) { return std::isfinite(loss); });
  std::string first_steps;
  for (size_t i = 0; i < figures->step_seconds.size() && i < 5; ++i) {
    first_steps += format(i ? ", %.2f" : "%.2f", figures->step_seconds[i]);
  }
  const double growth = static_cast<double>(figures->peak_growth_bytes);
  row.check =
      std::string(finite ? "ok" : "MISMATCH: a loss is not finite") +
      format(" (peak growth %.2f GiB", growth / (1 << 30)) +
      format(" = %.1fx parameters; steps 1-5: ", growth / static_cast<double>(parameter_bytes())) +
      first_steps + " s; last loss " +
      format("%.4f", figures->losses.empty() ? NAN : figures->losses.back()) + ")";
  if (figures->page_faults.size() > 2) {  // steps 3 on: buffers come from the cache, or not
    double later = 0;
    for (size_t i = 2; i < figures->page_faults.size(); ++i) later += figures->page_faults[i];
    row.check += format("; page faults per step from step 3: %.0f",
                        later / static_cast<double>(figures->page_faults.size() - 2));
  }
  row.mismatch = !finite;
  return row;
}

class MemorySuite : public Suite {
 public:
  std::string_view name() const override { return "memory"; }
  std::string_view description() const override {
    return "peak memory growth and the first steps of Adam and SGD on an MLP "
           "2048-4096-4096-4096-10 at batch 256, each framework in its own process, vs PyTorch "
           "and JAX; size = steps";
  }
  std::vector<std::string> workload_lines() const override {
    return {"adam: Adam (learning rate 1e-3); parameters, gradients and moments: 4x",
            "sgd: SGD (learning rate 1e-3); parameters and gradients: 2x"};
  }
  std::vector<Size> default_sizes() const override {
    return {{std::to_string(kDefaultSteps), kDefaultSteps}};
  }

  void run(const Options& options, Report& report) override {
    std::vector<std::string> optimizers;
    for (const char* optimizer : {"adam", "sgd"}) {
      if (options.workloads.empty() || std::find(options.workloads.begin(), options.workloads.end(),
                                                 optimizer) != options.workloads.end()) {
        optimizers.push_back(optimizer);
      }
    }
    if (optimizers.empty()) return;
    report.section(
        "memory: " + std::to_string(thread_count()) +
        " threads; peak resident growth over the steps against the " +
        format("%.0f MiB of parameters", static_cast<double>(parameter_bytes()) / (1 << 20)) +
        "; time = the steady step (the median of the second half); x hand here = "
        "time / lazuli's");
    const std::string threads = std::to_string(thread_count());
    const std::vector<std::string> environment = {"OMP_NUM_THREADS=" + threads,
                                                  "OPENBLAS_NUM_THREADS=" + threads,
                                                  "MKL_NUM_THREADS=" + threads};
    const std::vector<Size> sizes = options.sizes.empty() ? default_sizes() : options.sizes;
    for (const std::string& optimizer : optimizers) {
      for (const Size& size : sizes) {
        const std::string steps = std::to_string(std::max<int64_t>(2, size.elements));
        std::vector<Row> rows;
        rows.push_back(figures_row(
            optimizer, std::stoll(steps), "lazuli",
            run_process({"/proc/self/exe", "--memory-child", optimizer + ":" + steps}, {}, false)));
        if (options.numpy && !options.python.empty()) {
          const auto peer = [&](const std::string& framework,
                                std::vector<std::string> extra_environment) {
            return run_process(
                {options.python, LAZULI_BENCH_MEMORY_SCRIPT, framework, optimizer, steps},
                extra_environment, /*quiet=*/true);
          };
          std::vector<std::string> with_package = environment;
          with_package.push_back("PYTHONPATH=" LAZULI_BENCH_PYTHON_PACKAGE);
          rows.push_back(figures_row(optimizer, std::stoll(steps), "lazuli (Python)",
                                     peer("lazuli", with_package)));
          rows.push_back(
              figures_row(optimizer, std::stoll(steps), "torch eager", peer("torch", environment)));
          rows.push_back(
              figures_row(optimizer, std::stoll(steps), "jax jit step", peer("jax", environment)));
        }
        set_reference(rows, rows.front());
        for (Row& row : rows) report.add(std::move(row));
      }
    }
    report.note(
        "each step: loss = cross_entropy(mlp(params, x), labels), its gradient, the optimizer's "
        "update and one barrier (lazuli loss.item(), PyTorch loss.item(), JAX float(loss) after "
        "the jitted step, parameters and state donated); check: every loss finite");
  }
};

}  // namespace

int run_memory_child(const std::string& optimizer_and_steps) {
  const size_t colon = optimizer_and_steps.find(':');
  const std::string optimizer = optimizer_and_steps.substr(0, colon);
  if (colon == std::string::npos || (optimizer != "adam" && optimizer != "sgd")) {
    throw UsageError("--memory-child: expected adam:STEPS or sgd:STEPS");
  }
  lazuli_steps(optimizer, std::stoll(optimizer_and_steps.substr(colon + 1)));
  return 0;
}

std::unique_ptr<Suite> make_memory_suite() { return std::make_unique<MemorySuite>(); }

}  // namespace lazuli_bench
