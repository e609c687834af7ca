// The hand-written references: what a careful programmer writes for each workload, one fused
// pass per row or element, OpenMP across the threads and SIMD within them. They write into a
// preallocated output and are the best case the other columns are divided by.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "references.h"

namespace lazuli_bench::hand {
namespace {

/// Softmax of one row of `count` values; `in` may be `out`.
void softmax_row(const float* in, float* out, int64_t count) {
  float maximum = -std::numeric_limits<float>::infinity();
#pragma omp simd reduction(max : maximum)
  for (int64_t j = 0; j < count; ++j) maximum = std::max(maximum, in[j]);
  float total = 0;
#pragma omp simd reduction(+ : total)
  for (int64_t j = 0; j < count; ++j) {
    out[j] = std::exp(in[j] - maximum);
    total += out[j];
  }
  const float inverse = 1.0f / total;
#pragma omp simd
  for (int64_t j = 0; j < count; ++j) out[j] *= inverse;
}

}  // namespace

void chain7(const Problem& problem, const std::vector<const float*>& inputs, float* output) {
  const int64_t size = lz::shape_size(problem.output);
  const float* __restrict a = inputs[0];
  const float* __restrict b = inputs[1];
  const float* __restrict c = inputs[2];
  float* __restrict out = output;
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < size; ++i) {
    out[i] = ((a[i] * b[i] + c[i]) * a[i] - b[i]) * 0.5f + c[i] * c[i];
  }
}

void fma(const Problem& problem, const std::vector<const float*>& inputs, float* output) {
  const int64_t size = lz::shape_size(problem.output);
  const float* __restrict a = inputs[0];
  const float* __restrict b = inputs[1];
  const float* __restrict c = inputs[2];
  float* __restrict out = output;
#pragma omp parallel for simd schedule(static)
  for (int64_t i = 0; i < size; ++i) out[i] = a[i] * b[i] + c[i];
}

void sum(const Problem& problem, const std::vector<const float*>& inputs, float* output) {
  const int64_t size = lz::shape_size(problem.inputs[0].shape);
  const float* __restrict a = inputs[0];
  // Accumulating in double keeps 16M float32 values exact enough to be the reference (lazuli's
  // interpreter does the same); the loop stays bound by memory.
  double total = 0;
#pragma omp parallel for simd schedule(static) reduction(+ : total)
  for (int64_t i = 0; i < size; ++i) total += a[i];
  output[0] = static_cast<float>(total);
}

void softmax(const Problem& problem, const std::vector<const float*>& inputs, float* output) {
  const int64_t rows = problem.output[0];
  const int64_t cols = problem.output[1];
  const float* x = inputs[0];
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    softmax_row(x + r * cols, output + r * cols, cols);
  }
}

void layernorm(const Problem& problem, const std::vector<const float*>& inputs, float* output) {
  const int64_t rows = problem.output[0];
  const int64_t cols = problem.output[1];
  const float* x = inputs[0];
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    const float* __restrict in = x + r * cols;
    float* __restrict out = output + r * cols;
    // Double accumulators, as in sum: the centred values cancel to near zero, and the reference
    // must be more precise than the implementations it judges.
    double total = 0;
#pragma omp simd reduction(+ : total)
    for (int64_t j = 0; j < cols; ++j) total += in[j];
    const auto mean = static_cast<float>(total / static_cast<double>(cols));
    double squares = 0;
#pragma omp simd reduction(+ : squares)
    for (int64_t j = 0; j < cols; ++j) {
      const double centred = static_cast<double>(in[j]) - mean;
      squares += centred * centred;
    }
    const auto scale =
        static_cast<float>(1.0 / std::sqrt(squares / static_cast<double>(cols) + 1e-5));
#pragma omp simd
    for (int64_t j = 0; j < cols; ++j) out[j] = (in[j] - mean) * scale;
  }
}

// A simple blocked loop, not a tuned GEMM: each thread takes blocks of kRows rows of x and runs
// the whole network on them, the hidden activations staying in a per-thread buffer (in cache);
// w1 (64 KiB) and w2 are read from cache by every block.
void mlp(const Problem& problem, const std::vector<const float*>& inputs, float* output) {
  constexpr int64_t kRows = 32;
  const int64_t batch = problem.inputs[0].shape[0];
  const int64_t in_features = problem.inputs[0].shape[1];
  const int64_t hidden = problem.inputs[1].shape[1];
  const int64_t classes = problem.inputs[3].shape[1];
  const float* x = inputs[0];
  const float* w1 = inputs[1];
  const float* b1 = inputs[2];
  const float* w2 = inputs[3];
  const float* b2 = inputs[4];
#pragma omp parallel
  {
    std::vector<float> activations(kRows * hidden);
#pragma omp for schedule(static)
    for (int64_t first = 0; first < batch; first += kRows) {
      const int64_t rows = std::min(kRows, batch - first);
      for (int64_t i = 0; i < rows; ++i) {
        float* __restrict h = activations.data() + i * hidden;
        const float* x_row = x + (first + i) * in_features;
        std::copy(b1, b1 + hidden, h);
        for (int64_t p = 0; p < in_features; ++p) {
          const float x_ip = x_row[p];
          const float* __restrict w_row = w1 + p * hidden;
#pragma omp simd
          for (int64_t j = 0; j < hidden; ++j) h[j] += x_ip * w_row[j];
        }
#pragma omp simd
        for (int64_t j = 0; j < hidden; ++j) h[j] = std::max(h[j], 0.0f);
        float* __restrict logits = output + (first + i) * classes;
        std::copy(b2, b2 + classes, logits);
        for (int64_t p = 0; p < hidden; ++p) {
          const float h_ip = h[p];
          const float* __restrict w_row = w2 + p * classes;
#pragma omp simd
          for (int64_t j = 0; j < classes; ++j) logits[j] += h_ip * w_row[j];
        }
        softmax_row(logits, logits, classes);
      }
    }
  }
}

}  // namespace lazuli_bench::hand
