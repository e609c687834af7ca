// SGD and Adam: each step records the updates, so that a parameter and its state update in one
// fused kernel at the next blocking point.
#include <cmath>
#include <cstring>
#include <memory>
#include <string>

#include "frontend/kept_results.h"
#include "frontend/recording.h"
#include "lazuli/device.h"
#include "lazuli/error.h"
#include "lazuli/optim.h"
#include "memory/buffer.h"

namespace lz::optim {
namespace {

/// Throws unless grads match params one to one in shape, and `state` (empty before the first
/// step) has one entry per parameter.
void check_step(std::string_view op, const std::vector<Tensor>& params,
                const std::vector<Tensor>& grads, const std::vector<Tensor>& state) {
  const std::string name(op);
  if (params.size() != grads.size()) {
    throw Error("[" + name + "] got " + std::to_string(params.size()) + " parameters and " +
                std::to_string(grads.size()) + " gradients; give one gradient per parameter");
  }
  if (!state.empty() && state.size() != params.size()) {
    throw Error("[" + name + "] stepped " + std::to_string(state.size()) +
                " parameters before and got " + std::to_string(params.size()) +
                " now; an optimizer steps the same parameters every time (make a new one for "
                "others)");
  }
  for (size_t i = 0; i < params.size(); ++i) {
    const ir::NodePtr& p = frontend::node_of(params[i], op);
    const ir::NodePtr& g = frontend::node_of(grads[i], op);
    if (!is_floating(p->dtype) || p->shape != g->shape) {
      throw Error("[" + name + "] parameter " + std::to_string(i) + " is " +
                  shape_string(p->shape) + " " + std::string(dtype_name(p->dtype)) +
                  " and its gradient " + shape_string(g->shape) + " " +
                  std::string(dtype_name(g->dtype)) +
                  "; parameters are floating, and a gradient has its parameter's shape");
    }
    if (!state.empty() && state[i].shape() != p->shape) {
      throw Error("[" + name + "] parameter " + std::to_string(i) + " is " +
                  shape_string(p->shape) + " but was " + shape_string(state[i].shape()) +
                  " at the last step; an optimizer steps the same parameters every time");
    }
  }
}

/// Zeros of `p`'s dtype and shape on its device, each in memory of its own: computed zeros of one
/// shape would share one buffer (common subexpressions), which no step could then overwrite
/// in place, and which would give the first step another graph than the next ones.
Tensor zeros_of_its_own(std::string_view op, const Tensor& p, std::source_location loc) {
  if (p.device().kind() != Device::Kind::Cpu) {  // on a device: written by the first launch
    const DeviceScope on(p.device());
    return lz::zeros(p.shape(), p.dtype(), loc);
  }
  std::shared_ptr<memory::Buffer> buffer = frontend::allocate_host(op, p.dtype(), p.shape());
  std::memset(buffer->data(), 0, static_cast<size_t>(buffer->bytes()));
  return frontend::record_data(std::move(buffer), p.shape(), p.device(), loc);
}

/// The state before the first step: `sets` lists of zeros_of_its_own per parameter, with the
/// parameters launched now where they are still pending (generated initial values, which an
/// evaluation leaves pending). As data, like the parameters and state of every later step, they
/// give the first update the graph of the others: the plan cache hits from the third step.
std::vector<std::vector<Tensor>> first_state(std::string_view op, const std::vector<Tensor>& params,
                                             int sets, std::source_location loc) {
  std::vector<std::vector<Tensor>> state(sets);
  std::vector<Tensor> launched = params;
  for (std::vector<Tensor>& zeros : state) {
    for (const Tensor& p : params) zeros.push_back(zeros_of_its_own(op, p, loc));
    launched.insert(launched.end(), zeros.begin(), zeros.end());
  }
  eval_async(launched, loc);
  return state;
}

}  // namespace

SGD::SGD(Options options) : options_(options) {}

void SGD::step(std::vector<Tensor>& params, const std::vector<Tensor>& grads,
               std::source_location loc) try {
  check_step("SGD", params, grads, velocity_);
  // The new values are made first and kept only once every update is recorded, so that a step
  // that fails (a gradient on another device) changes nothing.
  std::vector<Tensor> updated(params.size());
  std::vector<Tensor> velocity(options_.momentum != 0 ? params.size() : 0);
  // v = 0 * momentum + g is g, as torch.optim.SGD's first step takes it.
  const bool momentum = options_.momentum != 0;
  const std::vector<std::vector<Tensor>> zeros =
      stepped_ ? std::vector<std::vector<Tensor>>{}
               : first_state("SGD", params, momentum ? 1 : 0, loc);
  const std::vector<Tensor>& previous_velocity = zeros.empty() ? velocity_ : zeros[0];
  for (size_t i = 0; i < params.size(); ++i) {
    const Tensor& p = params[i];
    Tensor g = frontend::cast(grads[i], p.dtype(), loc);
    if (options_.weight_decay != 0) g = Traced(g, loc) + Traced(p, loc) * options_.weight_decay;
    if (options_.momentum != 0) {
      velocity[i] = Traced(Traced(previous_velocity[i], loc) * options_.momentum, loc) + g;
      g = options_.nesterov ? Traced(g, loc) + Traced(velocity[i], loc) * options_.momentum
                            : velocity[i];
    }
    updated[i] = Traced(p, loc) - Traced(g, loc) * options_.learning_rate;
  }
  frontend::keep_when_computed(updated);
  frontend::keep_when_computed(velocity);
  params = std::move(updated);
  velocity_ = std::move(velocity);
  stepped_ = true;
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

Adam::Adam(Options options) : options_(options) {}

void Adam::step(std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                std::source_location loc) try {
  check_step("Adam", params, grads, first_moment_);
  const Options& o = options_;
  // The bias corrections fold into the step size and epsilon, numbers computed here.
  const auto t = static_cast<double>(steps_ + 1);
  const double first_correction = 1 - std::pow(o.beta1, t);
  const double second_root = std::sqrt(1 - std::pow(o.beta2, t));
  const double step_size = o.learning_rate / first_correction;
  // As in SGD::step, nothing changes until every update is recorded.
  std::vector<Tensor> updated(params.size());
  std::vector<Tensor> first_moment(params.size());
  std::vector<Tensor> second_moment(params.size());
  // Zero moments before the first step: m = 0 * beta1 + (1 - beta1) g is (1 - beta1) g.
  const std::vector<std::vector<Tensor>> zeros =
      steps_ == 0 ? first_state("Adam", params, 2, loc) : std::vector<std::vector<Tensor>>{};
  const std::vector<Tensor>& previous_first = zeros.empty() ? first_moment_ : zeros[0];
  const std::vector<Tensor>& previous_second = zeros.empty() ? second_moment_ : zeros[1];
  for (size_t i = 0; i < params.size(); ++i) {
    const Tensor& p = params[i];
    Tensor g = frontend::cast(grads[i], p.dtype(), loc);
    if (o.weight_decay != 0) g = Traced(g, loc) + Traced(p, loc) * o.weight_decay;
    Tensor& m = first_moment[i];
    Tensor& v = second_moment[i];
    m = Traced(Traced(previous_first[i], loc) * o.beta1, loc) + Traced(g, loc) * (1 - o.beta1);
    v = Traced(Traced(previous_second[i], loc) * o.beta2, loc) +
        Traced(square(g, loc), loc) * (1 - o.beta2);
    // m_hat / (sqrt(v_hat) + eps) = (m / c1) / (sqrt(v) / c2 + eps)
    const Tensor denominator = Traced(Traced(sqrt(v, loc), loc) / second_root, loc) + o.epsilon;
    updated[i] = Traced(p, loc) - Traced(Traced(m, loc) * step_size, loc) / denominator;
  }
  for (const std::vector<Tensor>* state : {&updated, &first_moment, &second_moment}) {
    frontend::keep_when_computed(*state);
  }
  params = std::move(updated);
  first_moment_ = std::move(first_moment);
  second_moment_ = std::move(second_moment);
  ++steps_;
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

}  // namespace lz::optim
