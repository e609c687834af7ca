// The training step the async suite times: a 64-128-10 MLP classifier at batch 64, forward,
// hand-written backward and an SGD update, with one barrier per step, written for lazuli and as
// plain loops (the check); peer_reference.py holds numpy's form.
#pragma once

#include <cstdint>
#include <vector>

#include <lazuli/lazuli.h>

namespace lazuli_bench {

inline constexpr int64_t kStepBatch = 64;
inline constexpr int64_t kStepInputs = 64;
inline constexpr int64_t kStepHidden = 128;
inline constexpr int64_t kStepClasses = 10;
inline constexpr float kStepRate = 0.1f;

/// The step's inputs as float32 values, row-major, in peer_reference.py's order: x [64,64], the
/// one-hot targets [64,10], then w1 [64,128], b1 [128], w2 [128,10], b2 [10].
std::vector<std::vector<float>> step_data();
/// Their shapes, in the same order.
std::vector<lz::Shape> step_shapes();

/// The parameters a step updates.
struct MlpParameters {
  lz::Tensor w1, b1, w2, b2;
};

/// Records one step: h = relu(x w1 + b1), p = softmax(h w2 + b2), the cross-entropy gradient
/// g = (p - targets) / batch, back through both layers, then w <- w - rate * dw for each
/// parameter.
void record_training_step(const lz::Tensor& x, const lz::Tensor& targets, MlpParameters& mlp);

/// w2 after `steps` steps from `data` (step_data's layout), computed by plain loops in double
/// precision.
std::vector<float> trained_w2(const std::vector<std::vector<float>>& data, int64_t steps);

}  // namespace lazuli_bench
