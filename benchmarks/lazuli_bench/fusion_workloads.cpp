// The fusion suite's workloads: what each computes, at which shapes, and in lazuli.
#include <algorithm>
#include <bit>
#include <cmath>

#include "references.h"
#include "workloads.h"

namespace lazuli_bench {
namespace {

#ifdef LAZULI_BENCH_HAVE_EIGEN
#define LAZULI_BENCH_EIGEN(function) &eigen::function
#else
#define LAZULI_BENCH_EIGEN(function) nullptr
#endif

// The MLP's layer widths: x [batch, kMlpInputs] -> hidden [batch, kMlpHidden] -> [batch,
// kMlpClasses]. A size counts the elements of x, so the batch is size / kMlpInputs: 8192 rows at
// 1M, 131072 at 16M, about 290 flops per element of x. Narrow layers keep the work comparable to
// the elementwise workloads, where the bias, relu and softmax around the matmuls still matter.
constexpr int64_t kMlpInputs = 128;
constexpr int64_t kMlpHidden = 128;
constexpr int64_t kMlpClasses = 16;

std::string label(const lz::Shape& shape) { return lz::shape_string(shape); }

Problem flat(int64_t elements, int input_count) {
  Problem problem;
  const char* names[] = {"a", "b", "c"};
  for (int i = 0; i < input_count; ++i) {
    problem.inputs.push_back({names[i], {elements}, 0.5f, 1.5f});
  }
  problem.output = {elements};
  problem.shape_label = label({elements});
  return problem;
}

/// rows x cols with cols the power of two nearest below sqrt(elements): 1M is (1024,1024), 16M
/// is (4096,4096), 64K is (256,256).
lz::Shape matrix_shape(int64_t elements) {
  const int64_t cols = int64_t{1} << ((std::bit_width(static_cast<uint64_t>(elements)) - 1) / 2);
  return {elements / cols, cols};
}

Problem three_vectors(int64_t elements) { return flat(elements, 3); }

Problem sum_problem(int64_t elements) {
  Problem problem = flat(elements, 1);
  problem.output = {};
  return problem;
}

Problem matrix(int64_t elements) {
  Problem problem;
  const lz::Shape shape = matrix_shape(elements);
  problem.inputs.push_back({"x", shape, 0.5f, 1.5f});
  problem.output = shape;
  problem.shape_label = label(shape);
  return problem;
}

Problem mlp_problem(int64_t elements) {
  const int64_t batch = std::max<int64_t>(1, elements / kMlpInputs);
  // Weights scaled by 1/sqrt(fan-in) keep the logits of order one.
  const float w1 = 1.0f / std::sqrt(static_cast<float>(kMlpInputs));
  const float w2 = 1.0f / std::sqrt(static_cast<float>(kMlpHidden));
  Problem problem;
  problem.inputs = {{"x", {batch, kMlpInputs}, -1.0f, 1.0f},
                    {"w1", {kMlpInputs, kMlpHidden}, -w1, w1},
                    {"b1", {kMlpHidden}, -0.1f, 0.1f},
                    {"w2", {kMlpHidden, kMlpClasses}, -w2, w2},
                    {"b2", {kMlpClasses}, -0.1f, 0.1f}};
  problem.output = {batch, kMlpClasses};
  problem.shape_label = std::string("x").append(label({batch, kMlpInputs}));
  return problem;
}

lz::Tensor build_chain7(const std::vector<lz::Tensor>& in) {
  const lz::Tensor &a = in[0], &b = in[1], &c = in[2];
  return ((a * b + c) * a - b) * 0.5 + c * c;
}

/// `result` once computed; called on a whole expression, whose temporaries outlive the wait.
lz::Tensor waited(const lz::Tensor& result) {
  result.wait_to_read();
  return result;
}

lz::Tensor build_chain7_one_line(const std::vector<lz::Tensor>& in) {
  const lz::Tensor &a = in[0], &b = in[1], &c = in[2];
  return waited(((a * b + c) * a - b) * 0.5 + c * c);
}

lz::Tensor build_fma(const std::vector<lz::Tensor>& in) { return in[0] * in[1] + in[2]; }

lz::Tensor build_sum(const std::vector<lz::Tensor>& in) { return lz::sum(in[0]); }

lz::Tensor build_softmax(const std::vector<lz::Tensor>& in) { return lz::softmax(in[0], -1); }

lz::Tensor build_layernorm(const std::vector<lz::Tensor>& in) {
  const lz::Tensor& x = in[0];
  const lz::Tensor centred = x - lz::mean(x, {-1}, /*keepdims=*/true);
  const lz::Tensor variance = lz::mean(centred * centred, {-1}, /*keepdims=*/true);
  return centred / lz::sqrt(variance + 1e-5);
}

lz::Tensor build_mlp(const std::vector<lz::Tensor>& in) {
  const lz::Tensor hidden = lz::relu(lz::matmul(in[0], in[1]) + in[2]);
  return lz::softmax(lz::matmul(hidden, in[3]) + in[4], -1);
}

}  // namespace

int64_t Problem::minimal_bytes() const {
  int64_t elements = lz::shape_size(output);
  for (const InputSpec& input : inputs) elements += lz::shape_size(input.shape);
  return elements * static_cast<int64_t>(sizeof(float));
}

const std::vector<Workload>& fusion_workloads() {
  static const std::vector<Workload> workloads = {
      {"chain7", "((a*b+c)*a-b)*0.5+c*c over vectors", three_vectors, build_chain7, hand::chain7,
       LAZULI_BENCH_EIGEN(chain7), build_chain7_one_line},
      {"fma", "a*b+c over vectors", three_vectors, build_fma, hand::fma, LAZULI_BENCH_EIGEN(fma)},
      {"sum", "sum of all elements of a vector (0-d result)", sum_problem, build_sum, hand::sum,
       LAZULI_BENCH_EIGEN(sum)},
      {"softmax", "softmax(x, -1) over the rows of a matrix", matrix, build_softmax, hand::softmax,
       LAZULI_BENCH_EIGEN(softmax)},
      {"layernorm", "(x-mean)/sqrt(var+1e-5) over rows, no affine", matrix, build_layernorm,
       hand::layernorm, LAZULI_BENCH_EIGEN(layernorm)},
      {"mlp", "softmax(relu(x@w1+b1)@w2+b2), x [size/128,128], 128 hidden, 16 classes", mlp_problem,
       build_mlp, hand::mlp, LAZULI_BENCH_EIGEN(mlp)},
  };
  return workloads;
}

std::vector<lz::Tensor> lazuli_inputs(const Problem& problem,
                                      const std::vector<std::vector<float>>& data) {
  std::vector<lz::Tensor> tensors;
  for (size_t i = 0; i < problem.inputs.size(); ++i) {
    tensors.push_back(lz::from_vector(data[i], problem.inputs[i].shape));
  }
  for (const lz::Tensor& tensor : tensors) tensor.wait_to_read();
  return tensors;
}

std::vector<float> random_input(const InputSpec& spec, uint64_t seed) {
  const int64_t size = lz::shape_size(spec.shape);
  std::vector<float> values(size);
  const float width = spec.high - spec.low;
  // splitmix64 of (seed, index): counter-based, so the fill parallelizes and is reproducible.
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < size; ++i) {
    uint64_t z = seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(i) + 1;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    const float unit = static_cast<float>(z >> 40) * 0x1.0p-24f;  // [0, 1)
    values[i] = spec.low + width * unit;
  }
  return values;
}

}  // namespace lazuli_bench
