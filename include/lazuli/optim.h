// Optimizers. A step records each parameter's update as ops and rebinds the caller's handles:
// nothing is computed until a blocking point, and one fused kernel updates a parameter together
// with its optimizer state, writing both over the old ones where nothing else holds them.
// Hyperparameters are numbers in the recorded ops, so changing the learning rate between steps
// compiles nothing new. The first step starts computing the parameters where they are still
// pending and makes the state zeros in memory of their own, and the new parameters and state
// are written out by whichever evaluation computes them: every step records the same graph,
// so from a loop's third step on the passes' result is reused.
#pragma once

#include <cstdint>
#include <source_location>
#include <vector>

#include "lazuli/tensor.h"

namespace lz::optim {

#define LZ_HERE std::source_location loc = std::source_location::current()

/// Stochastic gradient descent, as torch.optim.SGD: g = grad + weight_decay * p; with momentum,
/// v = momentum * v + g (v = g at the first step) and g = v (or g + momentum * v, nesterov);
/// then p = p - learning_rate * g.
class SGD {
 public:
  struct Options {
    double learning_rate = 0.01;
    double momentum = 0;
    double weight_decay = 0;
    bool nesterov = false;
  };
  explicit SGD(Options options);

  /// Rebinds each params[i] to its value after one step along grads[i] (of the same shape). The
  /// same parameters, in the same order, at every step.
  void step(std::vector<Tensor>& params, const std::vector<Tensor>& grads, LZ_HERE);

  /// The options, to change between steps (a learning-rate schedule).
  Options& options() { return options_; }

 private:
  Options options_;
  std::vector<Tensor> velocity_;
  bool stepped_ = false;
};

/// Adam (Kingma and Ba), as torch.optim.Adam: m = beta1 m + (1 - beta1) g, v = beta2 v +
/// (1 - beta2) g^2, p = p - learning_rate * m_hat / (sqrt(v_hat) + epsilon) with the bias
/// corrections m_hat = m / (1 - beta1^t), v_hat = v / (1 - beta2^t); weight_decay adds
/// weight_decay * p to g (L2, not AdamW).
class Adam {
 public:
  struct Options {
    double learning_rate = 1e-3;
    double beta1 = 0.9;
    double beta2 = 0.999;
    double epsilon = 1e-8;
    double weight_decay = 0;
  };
  explicit Adam(Options options);

  /// As SGD::step.
  void step(std::vector<Tensor>& params, const std::vector<Tensor>& grads, LZ_HERE);

  Options& options() { return options_; }
  /// Steps taken so far.
  int64_t steps() const { return steps_; }

 private:
  Options options_;
  std::vector<Tensor> first_moment_;
  std::vector<Tensor> second_moment_;
  int64_t steps_ = 0;
};

#undef LZ_HERE

}  // namespace lz::optim
