// The cuda suite: lazuli on a CUDA GPU against what the device itself can do, each experiment's
// variants measured side by side in one run. Fused and unfused elementwise work against the
// device-to-device copy bandwidth, lazuli's matmul against cuBLAS called directly, waiting after
// every op against once at the end, and two streams overlapped against serialized.
//
// Only GPU work is timed: inputs are drawn on the device and computed before the clock, and each
// timed run ends with wait_to_read() of its result, which waits for the device buffer and copies
// nothing to the host (the first to_vector() does, after the clock, for the check). The device's
// own baselines (the copy, cuBLAS) are queued on the CUDA stream behind lazuli's stream 0 and
// timed to a synchronize of that stream, on the same wall clock.
//
// Without a CUDA device the suite prints why it skips and measures nothing (under
// LAZULI_REQUIRE_CUDA=1, as on the CUDA emulation in CTest, it fails instead).
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <source_location>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <lazuli/lazuli.h>

#include "experiment.h"
#include "experiment_workloads.h"
#include "ir/node.h"
#include "runtime/cuda/cublas_matmul.h"
#include "runtime/cuda/device.h"
#include "suite.h"
#include "timing.h"
#include "workloads.h"

namespace lazuli_bench {
namespace {

namespace cuda = lz::runtime::cuda;

// The default size: 64M float32 elements (256 MiB per tensor), far beyond every cache, so the
// elementwise workloads measure memory bandwidth.
constexpr int64_t kDefaultElements = int64_t{64} << 20;
// The seed experiment's iterations at the default size; smaller sizes scale them down.
constexpr int64_t kDefaultIterations = 10'000;
constexpr int64_t kMinimumIterations = 100;
// Small enough that per-iteration overhead dominates, as in MXNet's experiment.
constexpr int64_t kVectorElements = 1000;
// Each stream of the two-stream experiment works on size / this many elements: small enough
// that one stream's kernels leave most of the GPU idle for the other's.
constexpr int64_t kStreamElementsDivisor = 256;
constexpr int64_t kMinimumStreamElements = 1024;
// The two-stream experiment runs iterations / this many steps per stream.
constexpr int64_t kIterationsPerStreamStep = 50;
// What lazuli should reach of the device's own figures.
constexpr double kCopyTargetPercent = 85;     // of the copy's GB/s, for chain7
constexpr double kSoftmaxTargetPercent = 70;  // likewise, for softmax over rows
constexpr double kMatmulTargetPercent = 95;
constexpr double kSyncTargetMicroseconds = 15;  // per y = x + 1; y.wait_to_read()
// The lazuli stream whose CUDA stream the copy and cuBLAS baselines are queued on: the one
// lazuli's own launches use by default.
constexpr int kStream = 0;

/// What the experiments derive from one size given on the command line.
struct Plan {
  int64_t elements = 0;  // the size given: elements of the elementwise workloads
  std::string size_label;
  int64_t matmul_side = 0;  // the power of two at or below sqrt(size) / 2: 4096 at 64M
  int64_t iterations = 0;   // 10,000 x size / 64M, at least 100
  Runs runs;
};

Plan make_plan(const Size& size, const Options& options) {
  Plan plan;
  plan.elements = size.elements;
  plan.size_label = size.label;
  const auto half_root = static_cast<uint64_t>(std::sqrt(static_cast<double>(size.elements)) / 2);
  plan.matmul_side = std::max<int64_t>(16, static_cast<int64_t>(std::bit_floor(half_root)));
  plan.iterations =
      std::max<int64_t>(kMinimumIterations, std::llround(static_cast<double>(kDefaultIterations) *
                                                         static_cast<double>(size.elements) /
                                                         static_cast<double>(kDefaultElements)));
  // At least one warm-up run, so that kernels are compiled (or loaded) and device memory is
  // allocated before the clock runs.
  plan.runs = {std::max(options.warmup, 1), options.repeat};
  return plan;
}

/// A row of `workload`; `bytes` is what the GB/s column counts. `lazuli` rows show the kernels
/// launched per run; the device's own baselines have none to show.
Row make_row(const std::string& workload, const std::string& size, const std::string& shape,
             const std::string& variant, const Timing& timing, int64_t bytes, bool lazuli) {
  Row row = timed_row("cuda", workload, size, shape, variant, timing, bytes);
  if (!lazuli) row.kernels_per_run.reset();
  return row;
}

/// A block of device memory from the device's caching allocator, for work on kStream; given back
/// to that stream's cache when destroyed (after the work using it has been synchronized).
class DeviceBlock {
 public:
  DeviceBlock(cuda::CudaDevice& device, int64_t elements)
      : device_(device),
        bytes_(elements * static_cast<int64_t>(sizeof(float))),
        address_(device.allocator().allocate(bytes_, kStream, "cuda suite")) {}
  ~DeviceBlock() { device_.allocator().free(address_, bytes_, kStream); }
  DeviceBlock(const DeviceBlock&) = delete;
  DeviceBlock& operator=(const DeviceBlock&) = delete;

  uint64_t address() const { return address_; }
  int64_t bytes() const { return bytes_; }

  /// Copies `values` (bytes() of them) in and waits for the copy.
  void upload(const std::vector<float>& values) {
    device_.make_current();
    cuda::check(device_.driver(),
                device_.driver().api.memcpy_htod_async(
                    address_, values.data(), static_cast<size_t>(bytes_), device_.stream(kStream)),
                "cuda suite", "cuMemcpyHtoDAsync");
    device_.synchronize(device_.stream(kStream), "cuda suite");
  }

  /// The block's elements, after the work queued on kStream before.
  std::vector<float> download() const {
    std::vector<float> values(static_cast<size_t>(bytes_) / sizeof(float));
    device_.make_current();
    cuda::check(device_.driver(),
                device_.driver().api.memcpy_dtoh_async(
                    values.data(), address_, static_cast<size_t>(bytes_), device_.stream(kStream)),
                "cuda suite", "cuMemcpyDtoHAsync");
    device_.synchronize(device_.stream(kStream), "cuda suite");
    return values;
  }

 private:
  cuda::CudaDevice& device_;
  const int64_t bytes_;
  const uint64_t address_;
};

/// Computes `tensors` on their device and waits for them, so that no clock includes it.
void compute(const std::vector<lz::Tensor>& tensors) {
  lz::eval_async(tensors);
  for (const lz::Tensor& tensor : tensors) tensor.wait_to_read();
}

// ---- 1. Fused and unfused elementwise work against the copy bandwidth ------------------------

/// The fusion suite's workload `name`.
const Workload& fusion_workload(const std::string& name) {
  for (const Workload& workload : fusion_workloads()) {
    if (name == workload.name) return workload;
  }
  throw std::logic_error("cuda suite: the fusion suite has no workload " + name);
}

/// The inputs of `problem`, drawn on the GPU (the calling thread's default device) and computed
/// there. Tensor::to(cuda) of a host tensor would keep its host buffer, which every kernel that
/// reads it copies in again, so each timed run would include the upload.
std::vector<lz::Tensor> device_inputs(const Problem& problem) {
  std::vector<lz::Tensor> inputs;
  uint64_t seed = 1;
  for (const InputSpec& spec : problem.inputs) {
    inputs.push_back(lz::random_uniform(spec.shape, seed++, spec.low, spec.high));
  }
  compute(inputs);
  return inputs;
}

/// The time of one run of `build` on `inputs`, from recording to wait_to_read() of the result,
/// which it leaves in `result` (the previous one freed before the clock starts).
std::function<double()> timed_build(const Workload& workload, const std::vector<lz::Tensor>& inputs,
                                    lz::Tensor& result) {
  return [&workload, &inputs, &result] {
    result = lz::Tensor();
    const Stopwatch stopwatch;
    lz::Tensor computed = workload.build(inputs);
    computed.wait_to_read();
    const double milliseconds = stopwatch.milliseconds();
    result = std::move(computed);
    return milliseconds;
  };
}

/// Copies `from` into `to` on the CUDA stream of lazuli's stream kStream through the driver
/// alone, and waits for the stream.
void copy_and_wait(cuda::CudaDevice& device, const DeviceBlock& from, const DeviceBlock& to) {
  device.make_current();
  cuda::check(
      device.driver(),
      device.driver().api.memcpy_dtod_async(
          to.address(), from.address(), static_cast<size_t>(from.bytes()), device.stream(kStream)),
      "cuda suite", "cuMemcpyDtoDAsync");
  device.synchronize(device.stream(kStream), "cuda suite");
}

/// The device-to-device copy of size floats: the bandwidth the elementwise rows are measured
/// against. The source holds `source`, which must arrive unchanged.
Row measure_copy(const Plan& plan, cuda::CudaDevice& device, const std::vector<float>& source) {
  DeviceBlock from(device, plan.elements);
  DeviceBlock to(device, plan.elements);
  from.upload(source);
  const Timing timing = time_runs(plan.runs, [&] {
    const Stopwatch stopwatch;
    copy_and_wait(device, from, to);
    return stopwatch.milliseconds();
  });
  // A copy reads and writes every byte once.
  Row row = make_row("copy", plan.size_label, lz::shape_string({plan.elements}),
                     "cuMemcpyDtoDAsync", timing, 2 * from.bytes(), /*lazuli=*/false);
  check(row, to.download(), source, "the device's copy bandwidth");
  return row;
}

/// Fused and unfused rows of the fusion suite's `name`, checked against its hand-written loop
/// on the host; `copy_gb_per_s` is the bandwidth the fused row is a percentage of, and should
/// reach `target_percent` of.
std::vector<Row> measure_fusion_workload(const Plan& plan, const std::string& name,
                                         double copy_gb_per_s, double target_percent) {
  const Workload& workload = fusion_workload(name);
  const Problem problem = workload.problem(plan.elements);
  const std::vector<lz::Tensor> inputs = device_inputs(problem);
  std::vector<std::vector<float>> host_inputs;
  std::vector<const float*> input_data;
  for (const lz::Tensor& input : inputs) host_inputs.push_back(input.to_vector<float>());
  for (const std::vector<float>& values : host_inputs) input_data.push_back(values.data());
  std::vector<float> expected(static_cast<size_t>(lz::shape_size(problem.output)));
  workload.hand(problem, input_data, expected.data());
  host_inputs.clear();  // the reference no longer needs them; the device inputs stay

  lz::Tensor result;
  const Timing fused = time_runs(plan.runs, timed_build(workload, inputs, result));
  Row fused_row = make_row(name, plan.size_label, problem.shape_label, "lazuli fused", fused,
                           problem.minimal_bytes(), /*lazuli=*/true);
  const double percent = fused_row.gigabytes_per_second().value_or(0) / copy_gb_per_s * 100;
  check(
      fused_row, result.to_vector<float>(), expected,
      format("%.0f%% of the copy's GB/s", percent) + format(" (target >= %.0f%%)", target_percent));
  if (percent < target_percent) fused_row.check += ", BELOW TARGET";

  Timing unfused;
  {
    const ScopedFusion fusion_off(false);
    unfused = time_runs(plan.runs, timed_build(workload, inputs, result));
  }
  Row unfused_row = make_row(name, plan.size_label, problem.shape_label, "lazuli unfused", unfused,
                             problem.minimal_bytes(), /*lazuli=*/true);
  check(unfused_row, result.to_vector<float>(), expected,
        format("%.0f%% of the copy's GB/s",
               unfused_row.gigabytes_per_second().value_or(0) / copy_gb_per_s * 100));

  std::vector<Row> rows = {fused_row, unfused_row};
  set_reference(rows, fused_row);
  return rows;
}

std::vector<Row> measure_elementwise(const Plan& plan, cuda::CudaDevice& device) {
  Row copy_row = measure_copy(plan, device, random_input({"a", {plan.elements}, 0.5f, 1.5f}, 1));
  copy_row.hand_ms = copy_row.median_ms;
  const double copy_gb_per_s = copy_row.gigabytes_per_second().value_or(0);

  std::vector<Row> rows = {copy_row};
  for (Row& row : measure_fusion_workload(plan, "chain7", copy_gb_per_s, kCopyTargetPercent)) {
    rows.push_back(std::move(row));
  }
  for (Row& row : measure_fusion_workload(plan, "softmax", copy_gb_per_s, kSoftmaxTargetPercent)) {
    rows.push_back(std::move(row));
  }
  return rows;
}

// ---- 2. lazuli's matmul against cuBLAS called directly ---------------------------------------

/// The MatMul node cublas_matmul reads its shapes and dtype from: [side, side] @ [side, side].
lz::ir::NodePtr matmul_node(int64_t side) {
  auto operand = [side] {
    lz::ir::NodePtr node = lz::ir::new_node();
    node->dtype = lz::float32;
    node->shape = {side, side};
    node->device = lz::Device::cuda();
    return node;
  };
  lz::ir::NodePtr node = lz::ir::new_node();
  node->op = lz::ir::Op::MatMul;
  node->dtype = lz::float32;
  node->shape = {side, side};
  node->device = lz::Device::cuda();
  node->inputs = {operand(), operand()};
  node->location = std::source_location::current();
  return node;
}

std::vector<Row> measure_matmul(const Plan& plan, cuda::CudaDevice& device) {
  const int64_t side = plan.matmul_side;
  const lz::Tensor a = lz::random_uniform({side, side}, 11, -1, 1);
  const lz::Tensor b = lz::random_uniform({side, side}, 12, -1, 1);
  compute({a, b});
  const std::vector<float> a_values = a.to_vector<float>();
  const std::vector<float> b_values = b.to_vector<float>();
  const std::vector<int64_t> entries = sampled_entries(side);
  const std::vector<float> expected = sampled_products(a_values, b_values, side, entries);
  const double flops =
      2.0 * static_cast<double>(side) * static_cast<double>(side) * static_cast<double>(side);
  const int64_t bytes = 3 * side * side * static_cast<int64_t>(sizeof(float));
  const std::string size = std::to_string(side) + "^3";
  const std::string shape = lz::shape_string({side, side});
  auto tflops = [flops](const Timing& timing) { return flops / (timing.median_ms * 1e9); };

  Timing direct;
  std::vector<float> direct_result;
  {
    DeviceBlock a_block(device, side * side);
    DeviceBlock b_block(device, side * side);
    DeviceBlock c_block(device, side * side);
    a_block.upload(a_values);
    b_block.upload(b_values);
    const lz::ir::NodePtr node = matmul_node(side);
    direct = time_runs(plan.runs, [&] {
      const Stopwatch stopwatch;
      cuda::cublas_matmul(device, kStream, *node, {a_block.address(), false},
                          {b_block.address(), false}, c_block.address());
      device.synchronize(device.stream(kStream), "matmul");
      return stopwatch.milliseconds();
    });
    direct_result = c_block.download();
  }
  Row direct_row = make_row("matmul", size, shape, "cuBLAS", direct, bytes, /*lazuli=*/false);
  check(direct_row, sampled(direct_result, entries), expected,
        format("%.1f TFLOP/s", tflops(direct)));

  lz::Tensor result;
  const Timing lazuli = time_runs(plan.runs, [&] {
    result = lz::Tensor();  // frees the previous product outside the clock
    const Stopwatch stopwatch;
    lz::Tensor product = lz::matmul(a, b);
    product.wait_to_read();
    const double milliseconds = stopwatch.milliseconds();
    result = std::move(product);
    return milliseconds;
  });
  Row lazuli_row = make_row("matmul", size, shape, "lazuli", lazuli, bytes, /*lazuli=*/true);
  const double percent = tflops(lazuli) / tflops(direct) * 100;
  check(lazuli_row, sampled(result.to_vector<float>(), entries), expected,
        format("%.1f TFLOP/s, ", tflops(lazuli)) + format("%.0f%% of cuBLAS's", percent) +
            format(" (target >= %.0f%%)", kMatmulTargetPercent));
  if (percent < kMatmulTargetPercent) lazuli_row.check += ", BELOW TARGET";

  std::vector<Row> rows = {direct_row, lazuli_row};
  set_reference(rows, direct_row);
  return rows;
}

// ---- 3. y = x + 1 with a wait after each, or one waitall --------------------------------------

/// The device's own round trip, the floor of the sync row: a 1000-float device-to-device copy
/// queued and waited for, plan.iterations times, through the driver API alone.
Row measure_round_trip_floor(const Plan& plan, cuda::CudaDevice& device,
                             const std::vector<float>& expected) {
  DeviceBlock from(device, kVectorElements);
  DeviceBlock to(device, kVectorElements);
  from.upload(expected);
  const Timing timing = time_runs(plan.runs, [&] {
    const Stopwatch stopwatch;
    for (int64_t i = 0; i < plan.iterations; ++i) copy_and_wait(device, from, to);
    return stopwatch.milliseconds();
  });
  Row row = make_row("wait_each", std::to_string(plan.iterations),
                     lz::shape_string({kVectorElements}), "driver copy+sync", timing,
                     plan.iterations * 2 * kVectorElements * 4, /*lazuli=*/false);
  check(row, to.download(), expected,
        format("%.1f us per iteration: the device's round trip, without lazuli",
               per_iteration_us(timing.median_ms, plan.iterations)));
  return row;
}

std::vector<Row> measure_wait_each(const Plan& plan, cuda::CudaDevice& device) {
  const lz::Tensor x = lz::arange(0, static_cast<double>(kVectorElements));
  x.wait_to_read();
  std::vector<float> expected(kVectorElements);
  for (int64_t i = 0; i < kVectorElements; ++i) expected[i] = static_cast<float>(i) + 1;
  const std::string size = std::to_string(plan.iterations);
  const std::string shape = lz::shape_string(x.shape());
  const int64_t bytes = plan.iterations * 2 * kVectorElements * 4;  // x read, y written

  lz::Tensor y;
  const Timing sync = time_runs(plan.runs, [&] {
    const Stopwatch stopwatch;
    for (int64_t i = 0; i < plan.iterations; ++i) {
      y = x + 1;
      y.wait_to_read();
    }
    return stopwatch.milliseconds();
  });
  const std::vector<float> sync_result = y.to_vector<float>();

  const Timing async = time_runs(plan.runs, [&] {
    const Stopwatch stopwatch;
    for (int64_t i = 0; i < plan.iterations; ++i) y = x + 1;
    lz::waitall();
    return stopwatch.milliseconds();
  });
  Row async_row = make_row("wait_each", size, shape, "async", async, bytes, /*lazuli=*/true);
  check(async_row, y.to_vector<float>(), expected,
        format("%.2f us per iteration", per_iteration_us(async.median_ms, plan.iterations)));

  // Each y above replaces the last, so lazuli computes only the final one (and keeping every y
  // would not help: they are one expression, which common-subexpression elimination computes
  // once). A kernel per iteration needs a chain, y = y + 1, and without fusion, which would put
  // up to 64 of its ops in one kernel.
  Timing chain;
  {
    const ScopedFusion fusion_off(false);
    chain = time_runs(plan.runs, [&] {
      y = x;
      const Stopwatch stopwatch;
      for (int64_t i = 0; i < plan.iterations; ++i) y = y + 1;
      lz::waitall();
      return stopwatch.milliseconds();
    });
  }
  Row chain_row =
      make_row("wait_each", size, shape, "chain, unfused", chain, bytes, /*lazuli=*/true);
  std::vector<float> chain_expected = expected;
  for (float& value : chain_expected) value += static_cast<float>(plan.iterations - 1);
  check(chain_row, y.to_vector<float>(), chain_expected,
        format("%.2f us per kernel launched",
               chain.median_ms * 1e3 / std::max(chain.kernels_per_run, 1.0)));

  Row sync_row = make_row("wait_each", size, shape, "sync", sync, bytes, /*lazuli=*/true);
  const double sync_us = per_iteration_us(sync.median_ms, plan.iterations);
  check(sync_row, sync_result, expected,
        format("%.1f us per iteration", sync_us) +
            format(" (target <= %.0f), ", kSyncTargetMicroseconds) +
            format("%.1fx async", sync.median_ms / async.median_ms));
  if (sync_us > kSyncTargetMicroseconds) sync_row.check += ", BELOW TARGET";

  std::vector<Row> rows = {async_row, sync_row, measure_round_trip_floor(plan, device, expected),
                           chain_row};
  set_reference(rows, async_row);
  return rows;
}

// ---- 4. Two streams overlapped or serialized --------------------------------------------------

/// Initial values 1 + i / n on the GPU, computed.
lz::Tensor initial_values(int64_t elements) {
  const auto n = static_cast<double>(elements);
  lz::Tensor values = 1 + lz::arange(0, n) / n;
  values.wait_to_read();
  return values;
}

std::vector<Row> measure_streams(const Plan& plan) {
  const int64_t elements = std::max(kMinimumStreamElements, plan.elements / kStreamElementsDivisor);
  const int64_t steps = std::max<int64_t>(1, plan.iterations / kIterationsPerStreamStep);
  const std::vector<lz::Tensor> initial = {initial_values(elements), initial_values(elements)};
  const std::string shape = "2 x " + lz::shape_string({elements});
  // Per unit and stream, as written: log and exp (one tensor in, one out), the + 1 (likewise).
  const int64_t bytes = 2 * steps * kUnitsPerStep * 3 * 2 * elements * 4;
  const std::string size = std::to_string(steps);
  std::vector<lz::Tensor> results;

  const Timing serialized = time_runs(plan.runs, [&] {
    results = initial;
    const Stopwatch stopwatch;
    for (int stream = 0; stream < 2; ++stream) {
      const lz::StreamScope scope(stream);
      for (int64_t step = 0; step < steps; ++step) launch_step(results[stream]);
      lz::waitall();
    }
    return stopwatch.milliseconds();
  });
  Row serialized_row =
      make_row("streams", size, shape, "serialized", serialized, bytes, /*lazuli=*/true);
  check_steps(serialized_row, results, elements, steps);

  // Steps alternate between the streams so that both have work from the start; a loop per
  // stream would fill LZ_MAX_IN_FLIGHT with the first stream's launches and wait for them.
  const Timing overlapped = time_runs(plan.runs, [&] {
    results = initial;
    const Stopwatch stopwatch;
    for (int64_t step = 0; step < steps; ++step) {
      for (int stream = 0; stream < 2; ++stream) {
        const lz::StreamScope scope(stream);
        launch_step(results[stream]);
      }
    }
    lz::waitall();
    return stopwatch.milliseconds();
  });
  Row overlapped_row =
      make_row("streams", size, shape, "overlapped", overlapped, bytes, /*lazuli=*/true);
  check_steps(overlapped_row, results, elements, steps,
              format("%.2fx speed-up", serialized.median_ms / overlapped.median_ms));

  std::vector<Row> rows = {overlapped_row, serialized_row};
  set_reference(rows, overlapped_row);
  return rows;
}

// ---- The suite --------------------------------------------------------------------------------

struct Experiment {
  const char* name;
  const char* description;  // for --list
  std::vector<Row> (*measure)(const Plan& plan, cuda::CudaDevice& device);
  bool needs_cublas = false;
};

const std::vector<Experiment>& experiments() {
  static const std::vector<Experiment> all = {
      {"elementwise",
       "chain7 ((a*b+c)*a-b)*0.5+c*c and softmax over rows, size elements: lazuli fused and "
       "unfused GB/s against cuMemcpyDtoDAsync of size floats",
       measure_elementwise},
      {"matmul",
       "float32 matmul, side sqrt(size)/2 (4096 at 64M): lazuli vs cuBLAS called directly",
       measure_matmul, /*needs_cublas=*/true},
      {"wait_each",
       "y = x + 1 (1000 floats), 10,000 x size/64M times: y.wait_to_read() after each vs one "
       "waitall vs the driver's own copy and wait; y = y + 1 unfused for the time per kernel "
       "launched",
       measure_wait_each},
      {"streams",
       "16 x = exp(log(x)) + 1 per step on size/256 floats on each of streams 0 and 1: "
       "overlapped vs serialized by a waitall",
       [](const Plan& plan, cuda::CudaDevice&) { return measure_streams(plan); }},
  };
  return all;
}

class CudaSuite : public Suite {
 public:
  std::string_view name() const override { return "cuda"; }
  std::string_view description() const override {
    return "lazuli on a CUDA GPU against the device's copy bandwidth and cuBLAS, sync vs async, "
           "two streams; size = elements (skips without a GPU)";
  }
  std::vector<std::string> workload_lines() const override {
    return experiment_lines(experiments());
  }
  std::vector<Size> default_sizes() const override { return {{"64M", kDefaultElements}}; }

  void run(const Options& options, Report& report) override {
    const std::vector<const Experiment*> selected =
        select_by_name(experiments(), options, "cuda", suite_named(options, "cuda"));
    if (selected.empty()) return;
    if (!lz::cuda::is_available()) {
      const std::string why = "no CUDA device: " + lz::cuda::unavailable_reason();
      // The run on the CUDA emulation sets it: a suite that skipped there measured nothing.
      const char* required = std::getenv("LAZULI_REQUIRE_CUDA");
      if (required != nullptr && std::string(required) == "1") {
        throw std::runtime_error("[cuda suite] LAZULI_REQUIRE_CUDA=1, but the suite would skip: " +
                                 why);
      }
      report.section("cuda: skipped: " + why);
      return;
    }
    cuda::CudaDevice& device = cuda::cuda_device(0);
    std::string cublas_missing;
    const bool has_cublas = cuda::cublas_available(&cublas_missing);
    const std::vector<Size> sizes = options.sizes.empty() ? default_sizes() : options.sizes;
    const ScopedFusion fused(true);
    // Every tensor the experiments create, and the constants their ops record, live on the GPU.
    const lz::DeviceScope on_gpu(lz::Device::cuda());
    std::vector<Row> rows;
    for (const Size& size : sizes) {
      const Plan plan = make_plan(size, options);
      for (const Experiment* experiment : selected) {
        if (experiment->needs_cublas && !has_cublas) continue;
        for (Row& row : experiment->measure(plan, device)) rows.push_back(std::move(row));
      }
    }
    const cuda::DeviceProperties& properties = device.properties();
    report.section("cuda: " + properties.name + " (" + properties.architecture() + ", " +
                   std::to_string(properties.multiprocessors) + " SMs), median of " +
                   std::to_string(options.repeat) + " runs after " +
                   std::to_string(std::max(options.warmup, 1)) +
                   " warm-up (at least one); x hand here = time / the time of the workload's "
                   "first row");
    for (Row& row : rows) report.add(std::move(row));
    report.note(
        "timed: only GPU work. Inputs are drawn on the device and computed before the clock; "
        "each lazuli run is timed from recording to wait_to_read() of its result, which waits "
        "for the device buffer and copies nothing to the host (the check's to_vector() does, "
        "after the clock)");
    report.note(
        "copy, cuBLAS and the driver's copy+sync: queued through the driver API on the CUDA stream "
        "of lazuli's stream 0, on memory from its caching allocator, and timed to "
        "cuStreamSynchronize on the same wall clock");
    report.note(
        "GB/s: chain7 and softmax count every input read once and the output written once; the "
        "copy counts its read and its write. Checks: against the fusion suite's hand-written "
        "loops on the host, matmul at 64 entries against double-precision dot products");
    report.note(
        "wait_each: async computes only the last y (each replaces the one before); 'chain, "
        "unfused' runs y = y + 1 as often with lz::set_fusion(false), a kernel per iteration: "
        "its us per kernel launched is its loop time / the kernels lz::stats() counted; "
        "'driver copy+sync' copies x to y and waits on the stream, the floor of sync's round "
        "trip");
    report.note(
        "streams: overlapped launches the two streams' steps alternately and waits once; "
        "serialized waits for stream 0's steps before launching stream 1's");
    if (!has_cublas) report.note("matmul: skipped: cuBLAS is not available: " + cublas_missing);
  }
};

}  // namespace

std::unique_ptr<Suite> make_cuda_suite() { return std::make_unique<CudaSuite>(); }

}  // namespace lazuli_bench
