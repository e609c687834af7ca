// Reverse-mode automatic differentiation of recorded code. Taking a gradient records the backward
// pass as ordinary ops on the pending graph (nothing is computed), so it is fused and scheduled
// with the forward pass, and a gradient can itself be differentiated.
#pragma once

#include <functional>
#include <source_location>
#include <vector>

#include "lazuli/tensor.h"

namespace lz {

#define LZ_HERE std::source_location loc = std::source_location::current()

/// A function of tensors returning a 0-d floating tensor (a loss), as grad and value_and_grad
/// take it.
using ScalarFunction = std::function<Tensor(const std::vector<Tensor>& params)>;

/// The gradients, one per input, of sum over i of sum(outputs[i] * cotangents[i]): the
/// vector-Jacobian product, as torch.autograd.grad computes it. Each cotangent has its output's
/// shape. Each input is a leaf: the gradient does not flow through one input into another it was
/// computed from. An input the outputs do not depend on gets zeros. Only float32 and float64
/// tensors have gradients: an integer or bool output or input is an "[grad]" error naming the op
/// and the line that recorded it; integer and bool values inside (comparisons, argmax) pass none.
/// The outputs must still be pending or have been computed under lz::grad / value_and_grad: an
/// output already computed otherwise is a "[grad]" error (it keeps no record of its inputs), and
/// a value computed in between is a constant to the gradient.
std::vector<Tensor> vjp(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                        const std::vector<Tensor>& cotangents, LZ_HERE);

/// The gradient of `f` with respect to each of `params`: f is called once with `params` (its code
/// is recorded, not computed) and must return a 0-d floating tensor. Values f uses that were
/// recorded before the call are constants to the gradient, computed or not.
std::vector<Tensor> grad(const ScalarFunction& f, const std::vector<Tensor>& params, LZ_HERE);

/// f's value and its gradients, from one recording of f.
struct ValueAndGrad {
  Tensor value;
  std::vector<Tensor> grads;
};
ValueAndGrad value_and_grad(const ScalarFunction& f, const std::vector<Tensor>& params, LZ_HERE);

/// x's value, through which no gradient flows: the backward pass treats it as a constant (JAX's
/// lax.stop_gradient, PyTorch's detach). softmax, log_softmax and logsumexp subtract their
/// maximum through it, as their gradients do not depend on the shift.
Tensor stop_gradient(const Tensor& x, LZ_HERE);

#undef LZ_HERE

}  // namespace lz
