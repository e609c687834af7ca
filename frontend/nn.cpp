// softmax, log_softmax, one_hot and cross_entropy, recorded as compositions of primitives:
// numerically stable (the maximum is subtracted before exponentiating), and turned into few
// kernels by fusion.
#include <limits>

#include "frontend/recording.h"
#include "ir/type_inference.h"
#include "lazuli/autodiff.h"

namespace lz {
namespace {

/// x - max(x, axis) in a floating dtype: every element <= 0, so exp cannot overflow.
Tensor shifted_by_max(const Tensor& x, int64_t axis, std::source_location loc) {
  const DType dtype = is_floating(x.dtype()) ? x.dtype() : float32;
  const Tensor values = frontend::cast(x, dtype, loc);
  // The result does not depend on the shift, so neither does its gradient.
  const Tensor largest =
      stop_gradient(max(values, {static_cast<int>(axis)}, /*keepdims=*/true, loc), loc);
  return frontend::record(frontend::make_node(ir::Op::Sub, {values.node(), largest.node()}, loc));
}

}  // namespace

Tensor softmax(const Tensor& x, int axis, std::source_location loc) try {
  const ir::NodePtr& node = frontend::node_of(x, "softmax");
  const int64_t normalized = ir::normalize_axis("softmax", axis, node->shape);
  if (node->shape[normalized] == 0) return exp(x, loc);  // empty in, empty out
  const Tensor exponentials = exp(shifted_by_max(x, normalized, loc), loc);
  const Tensor total = sum(exponentials, {static_cast<int>(normalized)}, /*keepdims=*/true, loc);
  return frontend::record(
      frontend::make_node(ir::Op::Div, {exponentials.node(), total.node()}, loc));
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

Tensor log_softmax(const Tensor& x, int axis, std::source_location loc) try {
  const ir::NodePtr& node = frontend::node_of(x, "log_softmax");
  const int64_t normalized = ir::normalize_axis("log_softmax", axis, node->shape);
  if (node->shape[normalized] == 0) return exp(x, loc);  // empty in, empty (floating) out
  const Tensor shifted = shifted_by_max(x, normalized, loc);
  const Tensor total = sum(exp(shifted, loc), {static_cast<int>(normalized)}, true, loc);
  return frontend::record(
      frontend::make_node(ir::Op::Sub, {shifted.node(), log(total, loc).node()}, loc));
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

Tensor one_hot(const Tensor& labels, int64_t classes, DType dtype, std::source_location loc) try {
  const ir::NodePtr& node = frontend::node_of(labels, "one_hot");
  if (!is_integer(node->dtype)) {
    throw Error("[one_hot] labels must be int32 or int64, got " +
                    std::string(dtype_name(node->dtype)) + " of shape " + shape_string(node->shape),
                Error::Kind::Type);
  }
  if (classes < 0) {
    throw Error("[one_hot] classes must be >= 0, got " + std::to_string(classes));
  }
  const DeviceScope on_labels_device(node->device);
  const Tensor positions = arange(0, static_cast<double>(classes), 1, node->dtype, loc);
  return astype(Traced(expand_dims(labels, -1, loc), loc) == positions, dtype, loc);
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

Tensor cross_entropy(const Tensor& logits, const Tensor& labels, std::source_location loc) try {
  const ir::NodePtr& scores = frontend::node_of(logits, "cross_entropy");
  const ir::NodePtr& targets = frontend::node_of(labels, "cross_entropy");
  const Shape batch(scores->shape.begin(), scores->shape.end() - (scores->shape.empty() ? 0 : 1));
  if (scores->shape.empty() || !is_floating(scores->dtype) || !is_integer(targets->dtype) ||
      targets->shape != batch) {
    throw Error("[cross_entropy] got logits " + shape_string(scores->shape) + " " +
                dtype_name(scores->dtype) + " and labels " + shape_string(targets->shape) + " " +
                dtype_name(targets->dtype) +
                "; expected floating logits of shape (..., classes) and integer labels of shape "
                "(...), one per row of logits");
  }
  const int64_t classes = scores->shape.back();
  const Tensor chosen = sum(Traced(logits, loc) * one_hot(labels, classes, scores->dtype, loc), -1,
                            /*keepdims=*/false, loc);
  const Tensor per_row = Traced(logsumexp(logits, -1, /*keepdims=*/false, loc), loc) - chosen;
  // A label outside [0, classes) picks no logit and would leave a finite loss that hides the
  // mistake: its row's loss is NaN instead, and so the mean, checked in the loss's own kernel.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Tensor checked = where(Traced(labels, loc) >= 0,
                               where(Traced(labels, loc) < classes, per_row, nan, loc), nan, loc);
  return mean(checked, {}, false, loc);
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

}  // namespace lz
