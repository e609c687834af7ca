// Building blocks for models: parameter initializers on the counter-based random generator, a
// linear layer and a multilayer perceptron, as functions of explicit parameters (so that
// lz::grad can differentiate with respect to them). A thin layer over the ops.
#pragma once

#include <cstdint>
#include <source_location>
#include <vector>

#include "lazuli/tensor.h"

namespace lz::nn {

#define LZ_HERE std::source_location loc = std::source_location::current()

// Initializers for a weight of `shape`, whose fan-out is its last dimension and fan-in the
// product of the others (a 1-d shape has both equal to its size). The same seed gives the same
// values on every device and in every mode.

/// Uniform in +-sqrt(6 / (fan_in + fan_out)) (Glorot and Bengio; Xavier uniform).
Tensor glorot_uniform(Shape shape, uint64_t seed, DType dtype = float32, LZ_HERE);
/// Normal with standard deviation sqrt(2 / (fan_in + fan_out)) (Xavier normal).
Tensor glorot_normal(Shape shape, uint64_t seed, DType dtype = float32, LZ_HERE);
/// Uniform in +-sqrt(6 / fan_in) (He et al.; Kaiming uniform), for layers followed by relu.
Tensor he_uniform(Shape shape, uint64_t seed, DType dtype = float32, LZ_HERE);
/// Normal with standard deviation sqrt(2 / fan_in) (Kaiming normal).
Tensor he_normal(Shape shape, uint64_t seed, DType dtype = float32, LZ_HERE);

/// x @ weight + bias, for weight (in, out) and bias (out).
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias, LZ_HERE);

/// The parameters of a multilayer perceptron with layer sizes {in, hidden..., out}: for each
/// layer a weight (in, out) drawn by he_normal (seeds seed, seed + 1, ...) and a zero bias (out),
/// in that order.
std::vector<Tensor> mlp_parameters(const std::vector<int64_t>& sizes, uint64_t seed,
                                   DType dtype = float32, LZ_HERE);
/// The perceptron's output (logits) for `x`: linear layers with relu between them, none after
/// the last. `parameters` as mlp_parameters gives them.
Tensor mlp(const std::vector<Tensor>& parameters, const Tensor& x, LZ_HERE);

#undef LZ_HERE

}  // namespace lz::nn
