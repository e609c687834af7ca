// The train suite: SGD steps of an MLP classifier through lz::value_and_grad, with one barrier
// per step (loss.item()), against the same steps in JAX (a jitted step) and PyTorch (eager),
// where the Python interpreter can import them. Two models: the digits MLP (64-128-10 at batch
// 64, overhead-bound) and a wide one (784-1024-1024-10 at batch 512, compute-bound). Every row's
// check is the loss of the last step against plain loops in double precision.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "experiment.h"
#include "peer_reference.h"
#include "suite.h"
#include "timing.h"
#include "workloads.h"

namespace lazuli_bench {
namespace {

constexpr double kRate = 0.1;

struct Model {
  const char* name;
  const char* description;  // for --list
  std::vector<int64_t> layers;
  int64_t batch;
  int64_t default_steps;
};

const std::vector<Model>& models() {
  static const std::vector<Model> all = {
      {"digits", "MLP 64-128-10, batch 64: overhead-bound", {64, 128, 10}, 64, 100},
      {"wide", "MLP 784-1024-1024-10, batch 512: compute-bound", {784, 1024, 1024, 10}, 512, 5},
  };
  return all;
}

/// The inputs in peer_reference.py's order: x (batch, in), the labels as float32 (batch), then
/// per layer its weight (in, out) and bias (out), Glorot-uniform and small.
std::vector<std::vector<float>> model_data(const Model& model) {
  const int64_t classes = model.layers.back();
  std::vector<std::vector<float>> data{
      random_input({"x", {model.batch, model.layers[0]}, -1, 1}, 71), {}};
  for (int64_t i = 0; i < model.batch; ++i) data[1].push_back(static_cast<float>(i % classes));
  for (size_t l = 0; l + 1 < model.layers.size(); ++l) {
    const int64_t in = model.layers[l], out = model.layers[l + 1];
    const auto bound = static_cast<float>(std::sqrt(6.0 / static_cast<double>(in + out)));
    data.push_back(random_input({"w", {in, out}, -bound, bound}, 72 + 2 * l));
    data.push_back(random_input({"b", {out}, -0.1f, 0.1f}, 73 + 2 * l));
  }
  return data;
}

std::vector<lz::Shape> model_shapes(const Model& model) {
  std::vector<lz::Shape> shapes{{model.batch, model.layers[0]}, {model.batch}};
  for (size_t l = 0; l + 1 < model.layers.size(); ++l) {
    shapes.push_back({model.layers[l], model.layers[l + 1]});
    shapes.push_back({model.layers[l + 1]});
  }
  return shapes;
}

/// The loss of the last of `steps` SGD steps, by plain loops in double precision, with the
/// backward pass written out by hand.
double reference_loss(const Model& model, const std::vector<std::vector<float>>& data,
                      int64_t steps) {
  using Matrix = std::vector<double>;
  const int64_t n = model.batch;
  const size_t layers = model.layers.size() - 1;
  std::vector<Matrix> weights, biases;
  for (size_t l = 0; l < layers; ++l) {
    weights.emplace_back(data[2 + 2 * l].begin(), data[2 + 2 * l].end());
    biases.emplace_back(data[3 + 2 * l].begin(), data[3 + 2 * l].end());
  }
  double loss = 0;
  for (int64_t step = 0; step < steps; ++step) {
    // Forward: activations[l] is the input of layer l, (n, layers[l]).
    std::vector<Matrix> activations{Matrix(data[0].begin(), data[0].end())};
    for (size_t l = 0; l < layers; ++l) {
      const int64_t in = model.layers[l], out = model.layers[l + 1];
      Matrix next(n * out);
      const Matrix& a = activations.back();
#pragma omp parallel for
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < out; ++j) next[i * out + j] = biases[l][j];
        for (int64_t k = 0; k < in; ++k) {
          const double left = a[i * in + k];
          for (int64_t j = 0; j < out; ++j) next[i * out + j] += left * weights[l][k * out + j];
        }
        if (l + 1 < layers) {
          for (int64_t j = 0; j < out; ++j) next[i * out + j] = std::max(0.0, next[i * out + j]);
        }
      }
      activations.push_back(std::move(next));
    }
    // Loss and its gradient with respect to the logits: (softmax - one_hot) / n.
    const int64_t classes = model.layers.back();
    Matrix g = activations.back();
    loss = 0;
    for (int64_t i = 0; i < n; ++i) {
      double* row = &g[i * classes];
      const double largest = *std::max_element(row, row + classes);
      double total = 0;
      for (int64_t c = 0; c < classes; ++c) total += std::exp(row[c] - largest);
      const auto label = static_cast<int64_t>(data[1][i]);
      loss += std::log(total) + largest - row[label];
      for (int64_t c = 0; c < classes; ++c) {
        row[c] = (std::exp(row[c] - largest) / total - (c == label ? 1.0 : 0.0)) / n;
      }
    }
    loss /= static_cast<double>(n);
    // Backward and update, last layer first.
    for (size_t l = layers; l-- > 0;) {
      const int64_t in = model.layers[l], out = model.layers[l + 1];
      const Matrix& a = activations[l];
      Matrix below(n * in, 0.0);
      if (l > 0) {
#pragma omp parallel for
        for (int64_t i = 0; i < n; ++i) {
          for (int64_t k = 0; k < in; ++k) {
            double sum = 0;
            for (int64_t j = 0; j < out; ++j) sum += g[i * out + j] * weights[l][k * out + j];
            below[i * in + k] = a[i * in + k] > 0 ? sum : 0.0;  // relu's gradient
          }
        }
      }
#pragma omp parallel for
      for (int64_t k = 0; k < in; ++k) {
        for (int64_t i = 0; i < n; ++i) {
          const double left = a[i * in + k];
          for (int64_t j = 0; j < out; ++j)
            weights[l][k * out + j] -= kRate * left * g[i * out + j];
        }
      }
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < out; ++j) biases[l][j] -= kRate * g[i * out + j];
      }
      g = std::move(below);
    }
  }
  return loss;
}

/// `steps` steps from the inputs, each waiting for its loss; returns the last loss.
float lazuli_steps(const std::vector<lz::Tensor>& inputs, int64_t steps) {
  const lz::Tensor& x = inputs[0];
  const lz::Tensor& labels = inputs[1];
  std::vector<lz::Tensor> params(inputs.begin() + 2, inputs.end());
  lz::optim::SGD sgd({.learning_rate = kRate});
  float loss = 0;
  for (int64_t step = 0; step < steps; ++step) {
    auto [value, grads] = lz::value_and_grad(
        [&](const std::vector<lz::Tensor>& p) {
          return lz::cross_entropy(lz::nn::mlp(p, x), labels);
        },
        params);
    sgd.step(params, grads);
    loss = value.item<float>();  // the barrier of each step
  }
  lz::waitall();
  return loss;
}

std::string per_step(double milliseconds, int64_t steps, int64_t batch) {
  const double us = per_iteration_us(milliseconds, steps);
  return format("%.1f us per step, ", us) + format("%.0f images/s", batch * 1e6 / us);
}

std::vector<Row> measure_model(const Model& model, int64_t steps, const Options& options) {
  const std::vector<std::vector<float>> data = model_data(model);
  const std::vector<lz::Shape> shapes = model_shapes(model);
  std::vector<lz::Tensor> inputs;
  for (size_t i = 0; i < data.size(); ++i) {
    inputs.push_back(lz::from_vector(data[i], shapes[i]));
    if (i == 1) inputs[1] = inputs[1].astype(lz::int64);
  }
  lz::eval_async(inputs);
  lz::waitall();
  const std::vector<float> expected{static_cast<float>(reference_loss(model, data, steps))};
  std::string shape;
  for (int64_t size : model.layers) shape += (shape.empty() ? "" : "-") + std::to_string(size);
  shape += " x " + std::to_string(model.batch);
  const Runs runs{std::max(options.warmup, 1), options.repeat};

  std::vector<Row> rows;
  for (const bool fused : {true, false}) {
    const ScopedFusion fusion(fused);
    float loss = 0;
    const Timing timing = time_runs(runs, [&] {
      const Stopwatch stopwatch;
      loss = lazuli_steps(inputs, steps);
      return stopwatch.milliseconds();
    });
    Row row = timed_row("train", model.name, std::to_string(steps), shape,
                        fused ? "lazuli" : "lazuli unfused", timing, 0);
    row.kernels_per_run = timing.kernels_per_run / static_cast<double>(steps);
    check(row, {loss}, expected, per_step(timing.median_ms, steps, model.batch));
    rows.push_back(std::move(row));
  }
  if (options.numpy && !options.python.empty()) {  // --no-numpy: no Python column at all
    Problem problem;
    for (const lz::Shape& input : shapes) problem.inputs.push_back({"", input});
    for (const char* framework : {"jax", "torch"}) {
      const PeerRun run = run_peer(options.python, framework, "train:" + std::to_string(steps),
                                   problem, data, runs.warmup, runs.repeat, thread_count());
      Row row = timed_row(
          "train", model.name, std::to_string(steps), shape,
          std::string(framework) + (std::string(framework) == "jax" ? " jit step" : " eager"), {},
          0);
      row.median_ms = run.median_ms;
      row.kernels_per_run.reset();
      if (run.median_ms) {
        check(row, run.output, expected, per_step(*run.median_ms, steps, model.batch));
      } else {
        row.check = run.problem;
      }
      rows.push_back(std::move(row));
    }
  }
  set_reference(rows, rows.front());
  return rows;
}

class TrainSuite : public Suite {
 public:
  std::string_view name() const override { return "train"; }
  std::string_view description() const override {
    return "SGD steps of MLP classifiers through lz::value_and_grad, one barrier per step, vs "
           "JAX (jitted step) and PyTorch (eager); size = steps";
  }
  std::vector<std::string> workload_lines() const override { return experiment_lines(models()); }
  std::vector<Size> default_sizes() const override { return {}; }

  void run(const Options& options, Report& report) override {
    const std::vector<const Model*> selected =
        select_by_name(models(), options, "train", suite_named(options, "train"));
    if (selected.empty()) return;
    std::vector<Row> rows;
    for (const Model* model : selected) {
      const std::vector<Size> sizes =
          options.sizes.empty()
              ? std::vector<Size>{{std::to_string(model->default_steps), model->default_steps}}
              : options.sizes;
      for (const Size& size : sizes) {
        for (Row& row : measure_model(*model, std::max<int64_t>(1, size.elements), options)) {
          rows.push_back(std::move(row));
        }
      }
    }
    report.section("train: median of " + std::to_string(options.repeat) + " runs after " +
                   std::to_string(std::max(options.warmup, 1)) + " warm-up, " +
                   std::to_string(thread_count()) +
                   " threads; size = SGD steps (learning rate 0.1) from the same initial "
                   "parameters; x hand here = time / lazuli's");
    for (Row& row : rows) report.add(std::move(row));
    report.note(
        "each step: loss = cross_entropy(mlp(params, x), labels), its gradient, the update, and "
        "one barrier (lazuli loss.item(), JAX float(loss) after the jitted step, PyTorch "
        "loss.item()); kernels: per step");
    report.note(
        "check: the last step's loss against plain loops in double precision with the backward "
        "pass written by hand");
  }
};

}  // namespace

std::unique_ptr<Suite> make_train_suite() { return std::make_unique<TrainSuite>(); }

}  // namespace lazuli_bench
