#include "training_step.h"

#include <algorithm>
#include <cmath>

#include "workloads.h"

namespace lazuli_bench {

std::vector<lz::Shape> step_shapes() {
  return {{kStepBatch, kStepInputs},   {kStepBatch, kStepClasses},
          {kStepInputs, kStepHidden},  {kStepHidden},
          {kStepHidden, kStepClasses}, {kStepClasses}};
}

std::vector<std::vector<float>> step_data() {
  const std::vector<lz::Shape> shapes = step_shapes();
  std::vector<std::vector<float>> data = {random_input({"x", shapes[0], -1, 1}, 31),
                                          {},
                                          random_input({"w1", shapes[2], -0.2f, 0.2f}, 32),
                                          random_input({"b1", shapes[3], -0.1f, 0.1f}, 33),
                                          random_input({"w2", shapes[4], -0.2f, 0.2f}, 34),
                                          random_input({"b2", shapes[5], -0.1f, 0.1f}, 35)};
  data[1].assign(kStepBatch * kStepClasses, 0.0f);  // sample i is of class i mod 10
  for (int64_t i = 0; i < kStepBatch; ++i) data[1][i * kStepClasses + i % kStepClasses] = 1.0f;
  return data;
}

void record_training_step(const lz::Tensor& x, const lz::Tensor& targets, MlpParameters& mlp) {
  const lz::Tensor h = lz::relu(lz::matmul(x, mlp.w1) + mlp.b1);
  const lz::Tensor probabilities = lz::softmax(lz::matmul(h, mlp.w2) + mlp.b2, -1);
  const lz::Tensor g = (probabilities - targets) * (1.0 / kStepBatch);
  const lz::Tensor gh = lz::where(h > 0, lz::matmul(g, lz::transpose(mlp.w2)), 0.0);
  mlp.w2 = mlp.w2 - kStepRate * lz::matmul(lz::transpose(h), g);
  mlp.b2 = mlp.b2 - kStepRate * lz::sum(g, {0});
  mlp.w1 = mlp.w1 - kStepRate * lz::matmul(lz::transpose(x), gh);
  mlp.b1 = mlp.b1 - kStepRate * lz::sum(gh, {0});
}

namespace {

using Matrix = std::vector<double>;

/// a [n,k] @ b [k,m], each optionally read transposed (a as [k,n], b as [m,k]).
Matrix product(const Matrix& a, const Matrix& b, int64_t n, int64_t k, int64_t m,
               bool a_transposed = false, bool b_transposed = false) {
  Matrix c(n * m, 0.0);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t p = 0; p < k; ++p) {
      const double left = a_transposed ? a[p * n + i] : a[i * k + p];
      for (int64_t j = 0; j < m; ++j)
        c[i * m + j] += left * (b_transposed ? b[j * k + p] : b[p * m + j]);
    }
  }
  return c;
}

}  // namespace

std::vector<float> trained_w2(const std::vector<std::vector<float>>& data, int64_t steps) {
  const auto widened = [](const std::vector<float>& values) {
    return Matrix(values.begin(), values.end());
  };
  const Matrix x = widened(data[0]), targets = widened(data[1]);
  Matrix w1 = widened(data[2]), b1 = widened(data[3]), w2 = widened(data[4]), b2 = widened(data[5]);
  constexpr int64_t n = kStepBatch, d = kStepInputs, hidden = kStepHidden, c = kStepClasses;
  for (int64_t step = 0; step < steps; ++step) {
    Matrix h = product(x, w1, n, d, hidden);
    for (int64_t i = 0; i < n * hidden; ++i) h[i] = std::max(0.0, h[i] + b1[i % hidden]);
    Matrix g = product(h, w2, n, hidden, c);
    for (int64_t i = 0; i < n; ++i) {
      double* row = &g[i * c];
      double largest = row[0];
      for (int64_t j = 0; j < c; ++j) largest = std::max(largest, row[j] + b2[j]);
      double total = 0;
      for (int64_t j = 0; j < c; ++j) total += row[j] = std::exp(row[j] + b2[j] - largest);
      for (int64_t j = 0; j < c; ++j) row[j] = (row[j] / total - targets[i * c + j]) / n;
    }
    Matrix gh = product(g, w2, n, c, hidden, false, /*b_transposed=*/true);
    for (int64_t i = 0; i < n * hidden; ++i) gh[i] = h[i] > 0 ? gh[i] : 0.0;
    const Matrix gw2 = product(h, g, hidden, n, c, /*a_transposed=*/true);
    const Matrix gw1 = product(x, gh, d, n, hidden, /*a_transposed=*/true);
    for (int64_t i = 0; i < hidden * c; ++i) w2[i] -= kStepRate * gw2[i];
    for (int64_t i = 0; i < d * hidden; ++i) w1[i] -= kStepRate * gw1[i];
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < c; ++j) b2[j] -= kStepRate * g[i * c + j];
      for (int64_t j = 0; j < hidden; ++j) b1[j] -= kStepRate * gh[i * hidden + j];
    }
  }
  return std::vector<float>(w2.begin(), w2.end());
}

}  // namespace lazuli_bench
