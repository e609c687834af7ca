// A workload: one expression, written once for lazuli and once per reference implementation,
// with the inputs and the result shape it has at a given size.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <lazuli/lazuli.h>

namespace lazuli_bench {

/// One float32 input, filled with uniform values in [low, high).
struct InputSpec {
  std::string name;
  lz::Shape shape;
  float low = 0;
  float high = 1;
};

/// A workload at one size.
struct Problem {
  std::vector<InputSpec> inputs;
  lz::Shape output;
  std::string shape_label;  // for the table: "(4096,4096)", "x(131072,128)"

  /// Every input read once and the output written once, in bytes.
  int64_t minimal_bytes() const;
};

/// Computes a workload's result from raw input data into a preallocated `output`.
using Reference = void (*)(const Problem& problem, const std::vector<const float*>& inputs,
                           float* output);

struct Workload {
  const char* name;
  const char* expression;  // for --list
  Problem (*problem)(int64_t elements);
  lz::Tensor (*build)(const std::vector<lz::Tensor>& inputs);
  Reference hand;   // the hand-written OpenMP loop
  Reference eigen;  // nullptr when built without Eigen
  /// The same expression waited for inside one line, so its C++ temporaries are alive at the
  /// blocking point (the "lazuli one-liner" row); nullptr when the workload has none.
  lz::Tensor (*build_one_line)(const std::vector<lz::Tensor>& inputs) = nullptr;
};

/// chain7, fma, sum, softmax, layernorm, mlp.
const std::vector<Workload>& fusion_workloads();

/// lazuli tensors holding copies of `data` (one vector per input of `problem`), already computed
/// so that no later measurement includes their creation.
std::vector<lz::Tensor> lazuli_inputs(const Problem& problem,
                                      const std::vector<std::vector<float>>& data);

/// Deterministic uniform values for `spec`; different seeds give unrelated values.
std::vector<float> random_input(const InputSpec& spec, uint64_t seed);

}  // namespace lazuli_bench
