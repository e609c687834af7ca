// The async suite: what lazuli's asynchronous engine saves and what it costs, each experiment's
// variants measured side by side in one run. Waiting after every op versus once at the end (the
// experiment of MXNet's asynchronous-execution docs), timing without a blocking point, two logical
// devices overlapped versus one after the other, the cost of recording an op, and a small
// training step; numpy, eager, runs the loops and the step in the same sitting.
//
// The timed work is small on purpose (1000-element vectors, 16K-element tensors): overheads per
// op and per launch are what this suite is about, so they must not hide behind compute.
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include <lazuli/lazuli.h>

#include "experiment.h"
#include "experiment_workloads.h"
#include "peer_reference.h"
#include "suite.h"
#include "timing.h"
#include "training_step.h"

namespace lazuli_bench {
namespace {

// Small enough that the per-iteration overhead dominates, as in MXNet's experiment.
constexpr int64_t kVectorElements = 1000;
constexpr int64_t kMatmulSide = 1000;
// Below the runtime's parallel grain (32K elements), so each kernel runs on its stream's thread
// alone: two devices then occupy two threads, not the whole shared pool each.
constexpr int64_t kDeviceTensorElements = 16 * 1024;
// The two-device workload runs iterations / this many steps per device.
constexpr int64_t kIterationsPerDeviceStep = 50;
// The node-budget recording run records this many times the iterations.
constexpr int64_t kRecordingOpsPerIteration = 10;
// The training step runs iterations / this many steps.
constexpr int64_t kIterationsPerTrainingStep = 100;
// lazuli's documented default of LZ_MAX_PENDING_NODES.
constexpr int64_t kDefaultMaxPendingNodes = 10'000;

/// Sets lz::set_max_pending_nodes for a scope, restoring the documented default afterwards (there
/// is no getter; LZ_MAX_PENDING_NODES is not re-read).
class ScopedMaxPendingNodes {
 public:
  explicit ScopedMaxPendingNodes(int64_t nodes) { lz::set_max_pending_nodes(nodes); }
  ~ScopedMaxPendingNodes() { lz::set_max_pending_nodes(kDefaultMaxPendingNodes); }
  ScopedMaxPendingNodes(const ScopedMaxPendingNodes&) = delete;
  ScopedMaxPendingNodes& operator=(const ScopedMaxPendingNodes&) = delete;
};

/// What one experiment needs from the command line.
struct Plan {
  int64_t iterations = 0;  // the size given (default 10,000)
  std::string size_label;
  Runs runs;
  std::string python;  // the interpreter of the numpy rows; empty: --no-numpy
};

/// numpy's row for the loop peer_reference.py calls `loop` (run `iterations` times) on `data`
/// of `shapes`, checked against `expected`, its time given per `unit` ("iteration", "step");
/// says why when numpy did not run.
Row numpy_row(const Plan& plan, const std::string& workload, const std::string& loop,
              int64_t iterations, const std::vector<std::vector<float>>& data,
              const std::vector<lz::Shape>& shapes, const std::vector<float>& expected,
              const std::string& shape, int64_t bytes, const char* unit = "iteration") {
  Problem problem;
  for (const lz::Shape& input : shapes) problem.inputs.push_back({"", input});
  const PeerRun run = run_peer(plan.python, "numpy", loop + ":" + std::to_string(iterations),
                               problem, data, plan.runs.warmup, plan.runs.repeat, thread_count());
  Row row = timed_row("async", workload, plan.size_label, shape, "numpy eager", {}, bytes);
  row.median_ms = run.median_ms;
  row.kernels_per_run.reset();  // not lazuli
  if (run.median_ms) {
    check(row, run.output, expected,
          format("%.2f us per ", per_iteration_us(*run.median_ms, iterations)) + unit);
  } else {
    row.check = run.problem;
  }
  return row;
}

std::string shape_label(const lz::Shape& shape) {
  std::string label = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) label += ',';
    label += std::to_string(shape[i]);
  }
  return label + ")";
}

/// 0, 1, ..., elements - 1 as float32, computed, on the calling thread's default device.
lz::Tensor counting_vector(int64_t elements) {
  lz::Tensor vector = lz::arange(0, static_cast<double>(elements));
  vector.wait_to_read();
  return vector;
}

std::vector<float> counting_values_plus(int64_t elements, float offset) {
  std::vector<float> values(elements);
  for (int64_t i = 0; i < elements; ++i) values[i] = static_cast<float>(i) + offset;
  return values;
}

/// The sync row's remark: what an iteration costs, and how much more than in `baseline`, the
/// asynchronous variant that computes the same kernels.
std::string round_trip_remark(const Timing& sync, const Timing& baseline,
                              const std::string& baseline_name, int64_t iterations) {
  const double sync_us = per_iteration_us(sync.median_ms, iterations);
  return format("%.1f us per iteration", sync_us) +
         format(" (%.1f us more than ",
                sync_us - per_iteration_us(baseline.median_ms, iterations)) +
         baseline_name + ")";
}

// ---- 1. y = x + 1 with a wait after each, or one waitall ------------------------------------

std::vector<Row> measure_wait_each(const Plan& plan) {
  const lz::Tensor x = counting_vector(kVectorElements);
  const std::vector<float> expected = counting_values_plus(kVectorElements, 1);
  const std::string shape = shape_label(x.shape());
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
  Row async_row = timed_row("async", "wait_each", plan.size_label, shape, "async", async, bytes);
  check(async_row, y.to_vector<float>(), expected,
        format("%.2f us per iteration", per_iteration_us(async.median_ms, plan.iterations)));

  // Each y above replaces the last, so lazuli computes only the final one. Keeping every y makes
  // it compute them all, as MXNet's engine did.
  std::vector<lz::Tensor> kept;
  const Timing all = time_runs(plan.runs, [&] {
    kept.clear();  // frees the previous run's results outside the clock
    kept.reserve(plan.iterations);
    const Stopwatch stopwatch;
    for (int64_t i = 0; i < plan.iterations; ++i) kept.push_back(x + 1);
    lz::waitall();
    return stopwatch.milliseconds();
  });
  Row all_row =
      timed_row("async", "wait_each", plan.size_label, shape, "async, all kept", all, bytes);
  std::vector<float> all_results;
  std::vector<float> all_expected;
  for (const lz::Tensor& result : kept) {
    const std::vector<float> values = result.to_vector<float>();
    all_results.insert(all_results.end(), values.begin(), values.end());
    all_expected.insert(all_expected.end(), expected.begin(), expected.end());
  }
  kept.clear();
  check(all_row, all_results, all_expected,
        "all " + std::to_string(plan.iterations) + " results checked");

  Row sync_row = timed_row("async", "wait_each", plan.size_label, shape, "sync", sync, bytes);
  check(sync_row, sync_result, expected,
        round_trip_remark(sync, all, "async, all kept", plan.iterations));

  std::vector<Row> rows = {async_row, sync_row, all_row};
  if (!plan.python.empty()) {
    rows.push_back(numpy_row(plan, "wait_each", "wait_each", plan.iterations,
                             {counting_values_plus(kVectorElements, 0)}, {x.shape()}, expected,
                             shape, bytes));
  }
  set_reference(rows, async_row);
  return rows;
}

// ---- 2. x = x + 1 chained, waited for each time or once ---------------------------------------

std::vector<Row> measure_chain(const Plan& plan) {
  const lz::Tensor start = counting_vector(kVectorElements);
  const std::vector<float> expected =
      counting_values_plus(kVectorElements, static_cast<float>(plan.iterations));
  const std::string shape = shape_label(start.shape());
  const int64_t bytes = plan.iterations * 2 * kVectorElements * 4;
  lz::Tensor x;

  const Timing sync = time_runs(plan.runs, [&] {
    x = start;
    const Stopwatch stopwatch;
    for (int64_t i = 0; i < plan.iterations; ++i) {
      x = x + 1;
      x.wait_to_read();
    }
    return stopwatch.milliseconds();
  });
  const std::vector<float> sync_result = x.to_vector<float>();

  auto async_run = [&] {
    x = start;
    const Stopwatch stopwatch;
    for (int64_t i = 0; i < plan.iterations; ++i) x = x + 1;
    lz::waitall();
    return stopwatch.milliseconds();
  };
  const Timing async = time_runs(plan.runs, async_run);
  Row async_row = timed_row("async", "chain", plan.size_label, shape, "async", async, bytes);
  check(async_row, x.to_vector<float>(), expected,
        format("%.2f us per iteration", per_iteration_us(async.median_ms, plan.iterations)));

  // Fusion puts up to 64 ops of the chain in each kernel; without it every op is a kernel, as in
  // the sync loop, and only the asynchronous engine is left to save time.
  Timing unfused;
  {
    const ScopedFusion fusion_off(false);
    unfused = time_runs(plan.runs, async_run);
  }
  Row unfused_row =
      timed_row("async", "chain", plan.size_label, shape, "async, unfused", unfused, bytes);
  check(unfused_row, x.to_vector<float>(), expected,
        format("%.2f us per iteration", per_iteration_us(unfused.median_ms, plan.iterations)));

  Row sync_row = timed_row("async", "chain", plan.size_label, shape, "sync", sync, bytes);
  check(sync_row, sync_result, expected,
        round_trip_remark(sync, unfused, "async, unfused", plan.iterations));

  std::vector<Row> rows = {async_row, sync_row, unfused_row};
  if (!plan.python.empty()) {
    rows.push_back(numpy_row(plan, "chain", "chain", plan.iterations,
                             {counting_values_plus(kVectorElements, 0)}, {start.shape()}, expected,
                             shape, bytes));
  }
  set_reference(rows, async_row);
  return rows;
}

// ---- 3. A matmul timed without and with a blocking point --------------------------------------

std::vector<Row> measure_matmul(const Plan& plan) {
  const lz::Shape shape = {kMatmulSide, kMatmulSide};
  const lz::Tensor a = lz::random_uniform(shape, 1, -1, 1);
  const lz::Tensor b = lz::random_uniform(shape, 2, -1, 1);
  lz::eval_async({a, b});
  const std::vector<float> a_values = a.to_vector<float>();
  const std::vector<float> b_values = b.to_vector<float>();
  const int64_t bytes = 3 * kMatmulSide * kMatmulSide * 4;
  lz::Tensor last;

  auto timed_product = [&](bool wait) {
    return [&, wait] {
      const Stopwatch stopwatch;
      lz::Tensor product = lz::matmul(a, b);
      if (wait) {
        product.wait_to_read();
      } else {
        product.eval_async();
      }
      const double milliseconds = stopwatch.milliseconds();
      product.wait_to_read();  // the next run must not overlap this one
      last = std::move(product);
      return milliseconds;
    };
  };
  const std::vector<int64_t> entries = sampled_entries(kMatmulSide);
  const std::vector<float> expected = sampled_products(a_values, b_values, kMatmulSide, entries);
  auto sampled_result = [&] { return sampled(last.to_vector<float>(), entries); };

  const std::string size = std::to_string(kMatmulSide) + "^2";
  const Timing enqueue = time_runs(plan.runs, timed_product(false));
  Row enqueue_row =
      timed_row("async", "matmul", size, shape_label(shape), "enqueue only", enqueue, bytes);
  check(enqueue_row, sampled_result(), expected, "result read after the clock stopped");

  const Timing waited = time_runs(plan.runs, timed_product(true));
  Row wait_row =
      timed_row("async", "matmul", size, shape_label(shape), "wait_to_read", waited, bytes);
  check(wait_row, sampled_result(), expected);

  std::vector<Row> rows = {enqueue_row, wait_row};
  set_reference(rows, enqueue_row);
  return rows;
}

// ---- 4. The same work on two logical devices, overlapped or one after the other ---------------

/// Initial values on `device`: 1 + i / n, computed.
lz::Tensor initial_values(lz::Device device) {
  const lz::DeviceScope scope(device);
  const auto n = static_cast<double>(kDeviceTensorElements);
  lz::Tensor values = 1 + lz::arange(0, n) / n;
  values.wait_to_read();
  return values;
}

std::vector<Row> measure_two_devices(const Plan& plan) {
  const int64_t steps = std::max<int64_t>(1, plan.iterations / kIterationsPerDeviceStep);
  const std::vector<lz::Tensor> initial = {initial_values(lz::Device::cpu(0)),
                                           initial_values(lz::Device::cpu(1))};
  const std::string shape = "2 x " + shape_label({kDeviceTensorElements});
  // Per unit and device, as written: log and exp (one tensor in, one out), the + 1 (likewise).
  const int64_t bytes = 2 * steps * kUnitsPerStep * 3 * 2 * kDeviceTensorElements * 4;
  std::vector<lz::Tensor> results;

  const Timing serialized = time_runs(plan.runs, [&] {
    results = initial;
    const Stopwatch stopwatch;
    for (lz::Tensor& x : results) {
      for (int64_t step = 0; step < steps; ++step) launch_step(x);
      lz::waitall();
    }
    return stopwatch.milliseconds();
  });
  const std::string size = std::to_string(steps);
  Row serialized_row = timed_row("async", "devices", size, shape, "serialized", serialized, bytes);
  check_steps(serialized_row, results, kDeviceTensorElements, steps);

  // Steps alternate between the devices so that both streams have work from the start; a loop
  // per device would fill LZ_MAX_IN_FLIGHT with the first device's launches and wait for them.
  const Timing overlapped = time_runs(plan.runs, [&] {
    results = initial;
    const Stopwatch stopwatch;
    for (int64_t step = 0; step < steps; ++step) {
      for (lz::Tensor& x : results) launch_step(x);
    }
    lz::waitall();
    return stopwatch.milliseconds();
  });
  Row overlapped_row = timed_row("async", "devices", size, shape, "overlapped", overlapped, bytes);
  check_steps(overlapped_row, results, kDeviceTensorElements, steps,
              format("%.2fx speed-up", serialized.median_ms / overlapped.median_ms));

  std::vector<Row> rows = {overlapped_row, serialized_row};
  set_reference(rows, overlapped_row);
  return rows;
}

// ---- 5. Recording cost ------------------------------------------------------------------------

std::vector<Row> measure_recording(const Plan& plan) {
  const lz::Tensor start = lz::full({}, 0.0);
  start.wait_to_read();
  const std::string shape = shape_label(start.shape());
  lz::Tensor x;

  // With the node budget the pending graph is launched every LZ_MAX_PENDING_NODES nodes, on the
  // recording thread's clock; its work runs on the stream meanwhile and is waited for after.
  const int64_t budget_ops = plan.iterations * kRecordingOpsPerIteration;
  const Timing budget = time_runs(plan.runs, [&] {
    x = start;
    const Stopwatch stopwatch;
    for (int64_t i = 0; i < budget_ops; ++i) x = x + 1;
    const double milliseconds = stopwatch.milliseconds();
    lz::waitall();
    return milliseconds;
  });
  Row budget_row =
      timed_row("async", "recording", std::to_string(budget_ops), shape, "node budget", budget, 0);
  check(budget_row, x.to_vector<float>(), {static_cast<float>(budget_ops)},
        format("%.0f ns per op", budget.median_ms * 1e6 / static_cast<double>(budget_ops)));

  // Without it nothing is launched: pure recording, then the chain is dropped uncomputed.
  Timing pure;
  int64_t evaluations = 0;
  {
    const ScopedMaxPendingNodes no_budget(0);
    const lz::Stats before = lz::stats();
    pure = time_runs(plan.runs, [&] {
      x = start;
      const Stopwatch stopwatch;
      for (int64_t i = 0; i < plan.iterations; ++i) x = x + 1;
      const double milliseconds = stopwatch.milliseconds();
      x = lz::Tensor();  // discards the chain outside the clock
      return milliseconds;
    });
    evaluations = stats_difference(lz::stats(), before).evaluations;
  }
  Row pure_row = timed_row("async", "recording", plan.size_label, shape, "no budget", pure, 0);
  pure_row.mismatch = evaluations != 0;
  pure_row.check =
      pure_row.mismatch
          ? "MISMATCH: " + std::to_string(evaluations) + " evaluations ran; none should"
          : format("ok (nothing evaluated); %.0f ns per op",
                   pure.median_ms * 1e6 / static_cast<double>(plan.iterations));
  return {budget_row, pure_row};
}

// ---- 6. A training step with one barrier per step -------------------------------------------

std::vector<Row> measure_training_step(const Plan& plan) {
  const int64_t steps = std::max<int64_t>(1, plan.iterations / kIterationsPerTrainingStep);
  const std::vector<std::vector<float>> data = step_data();
  const std::vector<lz::Shape> shapes = step_shapes();
  std::vector<lz::Tensor> tensors;
  for (size_t i = 0; i < data.size(); ++i) tensors.push_back(lz::from_vector(data[i], shapes[i]));
  lz::waitall();
  const std::vector<float> expected = trained_w2(data, steps);
  const std::string shape = "64-128-10 x 64";
  MlpParameters mlp = {tensors[2], tensors[3], tensors[4], tensors[5]};
  // The first step of the process runs the passes; every later one finds them in the plan cache.
  const lz::Stats before = lz::stats();
  record_training_step(tensors[0], tensors[1], mlp);
  lz::waitall();
  const bool first_missed = lz::stats().plan_misses > before.plan_misses;
  const double first_prepare_us = lz::last_evaluation().prepare_milliseconds * 1e3;

  const Timing timing = time_runs(plan.runs, [&] {
    mlp = {tensors[2], tensors[3], tensors[4], tensors[5]};
    const Stopwatch stopwatch;
    for (int64_t step = 0; step < steps; ++step) {
      record_training_step(tensors[0], tensors[1], mlp);
      lz::waitall();
    }
    return stopwatch.milliseconds();
  });
  Row row = timed_row("async", "train_step", std::to_string(steps), shape, "waitall each step",
                      timing, 0);
  const double prepare_us = lz::last_evaluation().prepare_milliseconds * 1e3;
  check(row, mlp.w2.to_vector<float>(), expected,
        format("%.1f us per step", per_iteration_us(timing.median_ms, steps)) +
            format("; blocking point to launch %.1f us", prepare_us) +
            (first_missed ? format(" (first step: %.1f us)", first_prepare_us) : ""));
  std::vector<Row> rows = {row};
  if (!plan.python.empty()) {
    Plan per_step = plan;
    per_step.size_label = std::to_string(steps);
    Row numpy = numpy_row(per_step, "train_step", "train_step", steps, data, shapes, expected,
                          shape, 0, "step");
    rows.push_back(std::move(numpy));
  }
  set_reference(rows, row);
  return rows;
}

// ---- The suite --------------------------------------------------------------------------------

struct Experiment {
  const char* name;
  const char* description;  // for --list
  std::vector<Row> (*measure)(const Plan& plan);
};

const std::vector<Experiment>& experiments() {
  static const std::vector<Experiment> all = {
      {"wait_each",
       "y = x + 1 (1000 floats), size times: y.wait_to_read() after each vs one waitall",
       measure_wait_each},
      {"chain", "x = x + 1 chained size times: wait each iteration vs one waitall", measure_chain},
      {"matmul", "1000x1000 matmul timed to eval_async (enqueue only) vs to wait_to_read",
       measure_matmul},
      {"devices",
       "size/50 steps of 16 x = exp(log(x)) + 1 on 16K floats on each of cpu(0) and cpu(1): "
       "overlapped vs serialized",
       measure_two_devices},
      {"recording",
       "x = x + 1 recorded 10 x size times under the node budget, and size times with none",
       measure_recording},
      {"train_step",
       "size/100 SGD steps of a 64-128-10 MLP classifier at batch 64 (forward, hand-written "
       "backward, update), lz::waitall() after each",
       measure_training_step},
  };
  return all;
}

class AsyncSuite : public Suite {
 public:
  std::string_view name() const override { return "async"; }
  std::string_view description() const override {
    return "synchronous vs asynchronous evaluation, enqueue vs wait, two devices overlapped vs "
           "serialized, recording cost; size = iterations";
  }
  std::vector<std::string> workload_lines() const override {
    return experiment_lines(experiments());
  }
  std::vector<Size> default_sizes() const override { return {{"10000", 10'000}}; }

  void run(const Options& options, Report& report) override {
    const std::vector<const Experiment*> selected =
        select_by_name(experiments(), options, "async", suite_named(options, "async"));
    const std::vector<Size> sizes = options.sizes.empty() ? default_sizes() : options.sizes;
    if (selected.empty()) return;
    const ScopedFusion fused(true);
    std::vector<Row> rows;
    for (const Size& size : sizes) {
      // At least one warm-up run, so that kernels are compiled (or loaded from the disk cache)
      // before the clock runs.
      const Plan plan{size.elements,
                      size.label,
                      {std::max(options.warmup, 1), options.repeat},
                      options.numpy ? options.python : std::string()};
      for (const Experiment* experiment : selected) {
        for (Row& row : experiment->measure(plan)) rows.push_back(std::move(row));
      }
    }
    report.section("async: median of " + std::to_string(options.repeat) + " runs after " +
                   std::to_string(std::max(options.warmup, 1)) +
                   " warm-up (at least one, so no kernel is compiled on the clock), " +
                   std::to_string(thread_count()) +
                   " threads; size = loop iterations (devices: steps per device, recording: ops); "
                   "x hand here = time / the time of the workload's first row");
    for (Row& row : rows) report.add(std::move(row));
    report.note(
        "sync: wait_to_read() after every iteration; async: no wait in the loop, one "
        "lz::waitall() at the end");
    report.note(
        "wait_each async computes only the last y (each y replaces the one before); "
        "'all kept' keeps every y, so all are computed, as MXNet's engine does");
    report.note(
        "chain async: fusion puts up to 64 ops in a kernel; 'unfused' "
        "(lz::set_fusion(false)) runs a kernel per op, as sync does");
    report.note(
        "matmul enqueue only: the clock stops at eval_async(), before the product is "
        "computed, as in a benchmark without a blocking point");
    report.note(
        "devices: overlapped launches the two devices' steps alternately and waits once; "
        "serialized waits for cpu(0)'s steps before recording cpu(1)'s");
    report.note(
        "recording: only the loop is timed; an op is one x = x + 1 (a node for the add; "
        "the 1 is one constant node every op shares). Under the node budget "
        "(LZ_MAX_PENDING_NODES) each overflow runs the passes and launches on the recording "
        "thread");
    report.note(
        "train_step: forward, hand-written backward and SGD update of every parameter; the "
        "check is w2 after the steps against plain loops in double precision; blocking point "
        "to launch: the last step's passes or plan cache lookup (lz::last_evaluation()), and "
        "the process's first step's, which ran the passes");
    report.note(
        "numpy eager: the same loop in numpy (peer_reference.py), in a Python subprocess on "
        "the same inputs, timed around the loop");
    report.note(
        "GB/s: the bytes each op reads and writes as written, one op at a time "
        "(recording, train_step: 0)");
  }
};

}  // namespace

std::unique_ptr<Suite> make_async_suite() { return std::make_unique<AsyncSuite>(); }

}  // namespace lazuli_bench
