// The Eigen references: the same expressions as Eigen array and matrix code. Eigen parallelizes
// only its matrix products (through OpenMP); the elementwise and row-wise expressions are split
// across the same OpenMP threads here, in contiguous segments or blocks of rows, so that every
// column uses every thread.
#include <omp.h>
#include <Eigen/Dense>
#include <algorithm>

#include "references.h"

namespace lazuli_bench::eigen {
namespace {

using Vector = Eigen::Map<const Eigen::ArrayXf>;
using OutputVector = Eigen::Map<Eigen::ArrayXf>;
using RowMajorArray = Eigen::Array<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Rows = Eigen::Map<const RowMajorArray>;
using OutputRows = Eigen::Map<RowMajorArray>;
using RowMajorMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

/// Calls body(first, count) on this thread's contiguous share of [0, size), in a parallel region.
template <class Body>
void for_each_segment(int64_t size, Body body) {
#pragma omp parallel
  {
    const int64_t threads = omp_get_num_threads();
    const int64_t thread = omp_get_thread_num();
    const int64_t first = size * thread / threads;
    const int64_t last = size * (thread + 1) / threads;
    if (last > first) body(first, last - first);
  }
}

/// Calls body(first_row, rows) on blocks of kRows rows, the blocks spread over the threads.
template <class Body>
void for_each_row_block(int64_t rows, Body body) {
  constexpr int64_t kRows = 16;
#pragma omp parallel for schedule(static)
  for (int64_t first = 0; first < rows; first += kRows) body(first, std::min(kRows, rows - first));
}

template <class Input, class Output>
void softmax_rows(const Input& x, Output&& out) {
  const RowMajorArray e = (x.colwise() - x.rowwise().maxCoeff()).exp();
  out = e.colwise() / e.rowwise().sum();
}

}  // namespace

void chain7(const Problem& problem, const std::vector<const float*>& inputs, float* output) {
  for_each_segment(lz::shape_size(problem.output), [&](int64_t first, int64_t count) {
    const Vector a(inputs[0] + first, count), b(inputs[1] + first, count),
        c(inputs[2] + first, count);
    OutputVector(output + first, count) = ((a * b + c) * a - b) * 0.5f + c * c;
  });
}

void fma(const Problem& problem, const std::vector<const float*>& inputs, float* output) {
  for_each_segment(lz::shape_size(problem.output), [&](int64_t first, int64_t count) {
    const Vector a(inputs[0] + first, count), b(inputs[1] + first, count),
        c(inputs[2] + first, count);
    OutputVector(output + first, count) = a * b + c;
  });
}

void sum(const Problem& problem, const std::vector<const float*>& inputs, float* output) {
  const int64_t size = lz::shape_size(problem.inputs[0].shape);
  double total = 0;
#pragma omp parallel reduction(+ : total)
  {
    const int64_t threads = omp_get_num_threads();
    const int64_t thread = omp_get_thread_num();
    const int64_t first = size * thread / threads;
    const int64_t last = size * (thread + 1) / threads;
    if (last > first) total += Vector(inputs[0] + first, last - first).sum();
  }
  output[0] = static_cast<float>(total);
}

void softmax(const Problem& problem, const std::vector<const float*>& inputs, float* output) {
  const int64_t cols = problem.output[1];
  for_each_row_block(problem.output[0], [&](int64_t first, int64_t rows) {
    softmax_rows(Rows(inputs[0] + first * cols, rows, cols),
                 OutputRows(output + first * cols, rows, cols));
  });
}

void layernorm(const Problem& problem, const std::vector<const float*>& inputs, float* output) {
  const int64_t cols = problem.output[1];
  for_each_row_block(problem.output[0], [&](int64_t first, int64_t rows) {
    const Rows x(inputs[0] + first * cols, rows, cols);
    const RowMajorArray centred = x.colwise() - x.rowwise().mean();
    const Eigen::ArrayXf variance = centred.square().rowwise().mean();
    OutputRows(output + first * cols, rows, cols) = centred.colwise() * (variance + 1e-5f).rsqrt();
  });
}

// Whole-matrix products, which Eigen runs on its OpenMP threads; bias and relu are Eigen
// expressions over the results, and the softmax is split over row blocks as above.
void mlp(const Problem& problem, const std::vector<const float*>& inputs, float* output) {
  const int64_t batch = problem.inputs[0].shape[0];
  const int64_t in_features = problem.inputs[0].shape[1];
  const int64_t hidden = problem.inputs[1].shape[1];
  const int64_t classes = problem.inputs[3].shape[1];
  using Matrix = Eigen::Map<const RowMajorMatrix>;
  using RowVector = Eigen::Map<const Eigen::RowVectorXf>;
  const Matrix x(inputs[0], batch, in_features);
  const Matrix w1(inputs[1], in_features, hidden);
  const RowVector b1(inputs[2], hidden);
  const Matrix w2(inputs[3], hidden, classes);
  const RowVector b2(inputs[4], classes);
  RowMajorMatrix activations = x * w1;
  activations = (activations.rowwise() + b1).cwiseMax(0.0f);
  RowMajorMatrix logits = activations * w2;
  logits.rowwise() += b2;
  for_each_row_block(batch, [&](int64_t first, int64_t rows) {
    softmax_rows(Rows(logits.data() + first * classes, rows, classes),
                 OutputRows(output + first * classes, rows, classes));
  });
}

}  // namespace lazuli_bench::eigen
