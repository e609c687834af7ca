// Reference implementations of the fusion workloads: hand-written OpenMP loops (hand_loops.cpp)
// and Eigen (eigen_references.cpp, built only when Eigen is found).
#pragma once

#include "workloads.h"

namespace lazuli_bench::hand {
void chain7(const Problem& problem, const std::vector<const float*>& inputs, float* output);
void fma(const Problem& problem, const std::vector<const float*>& inputs, float* output);
void sum(const Problem& problem, const std::vector<const float*>& inputs, float* output);
void softmax(const Problem& problem, const std::vector<const float*>& inputs, float* output);
void layernorm(const Problem& problem, const std::vector<const float*>& inputs, float* output);
void mlp(const Problem& problem, const std::vector<const float*>& inputs, float* output);
}  // namespace lazuli_bench::hand

#ifdef LAZULI_BENCH_HAVE_EIGEN
namespace lazuli_bench::eigen {
void chain7(const Problem& problem, const std::vector<const float*>& inputs, float* output);
void fma(const Problem& problem, const std::vector<const float*>& inputs, float* output);
void sum(const Problem& problem, const std::vector<const float*>& inputs, float* output);
void softmax(const Problem& problem, const std::vector<const float*>& inputs, float* output);
void layernorm(const Problem& problem, const std::vector<const float*>& inputs, float* output);
void mlp(const Problem& problem, const std::vector<const float*>& inputs, float* output);
}  // namespace lazuli_bench::eigen
#endif
