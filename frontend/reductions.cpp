// Reductions: axes are normalized here, so the IR only sees ascending non-negative axes.
#include <algorithm>
#include <utility>

#include "frontend/recording.h"
#include "ir/type_inference.h"
#include "lazuli/autodiff.h"
#include "lazuli/error.h"

namespace lz {
namespace {

using frontend::cast;
using frontend::make_node;
using frontend::node_of;
using frontend::record;
using ir::Op;

/// `axes` made non-negative and sorted; empty means every axis. Rejects repeats.
std::vector<int64_t> normalize_axes(std::string_view op, const std::vector<int>& axes,
                                    const Shape& shape) {
  std::vector<int64_t> normalized;
  if (axes.empty()) {
    for (size_t d = 0; d < shape.size(); ++d) normalized.push_back(static_cast<int64_t>(d));
    return normalized;
  }
  for (int axis : axes) normalized.push_back(ir::normalize_axis(op, axis, shape));
  std::sort(normalized.begin(), normalized.end());
  const auto repeated = std::adjacent_find(normalized.begin(), normalized.end());
  if (repeated != normalized.end()) {
    std::string listed;
    for (int axis : axes) listed += (listed.empty() ? "" : ",") + std::to_string(axis);
    throw Error("[" + std::string(op) + "] axis " + std::to_string(*repeated) +
                " appears twice in axes [" + listed + "] for shape " + shape_string(shape));
  }
  return normalized;
}

Tensor reduce(Op op, const Tensor& x, std::vector<int64_t> axes, bool keepdims,
              std::source_location loc) {
  ir::NodePtr node = make_node(op, {x.node()}, loc);
  node->set_attributes().axes = std::move(axes);
  node->keepdims = keepdims;
  return record(std::move(node));
}

}  // namespace

Tensor sum(const Tensor& x, Axes axes, bool keepdims, std::source_location loc) try {
  const ir::NodePtr& node = node_of(x, "sum");
  std::vector<int64_t> normalized = normalize_axes("sum", axes.list(), node->shape);
  const DType dtype = is_floating(node->dtype) ? node->dtype : int64;
  return reduce(Op::Sum, cast(x, dtype, loc), std::move(normalized), keepdims, loc);
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

Tensor mean(const Tensor& x, Axes axes, bool keepdims, std::source_location loc) try {
  const ir::NodePtr& node = node_of(x, "mean");
  std::vector<int64_t> normalized = normalize_axes("mean", axes.list(), node->shape);
  int64_t count = 1;
  for (int64_t axis : normalized) count *= node->shape[axis];
  const DType dtype = is_floating(node->dtype) ? node->dtype : float32;
  // Over zero elements this is 0 / 0 = NaN, as in numpy.
  const Tensor total = reduce(Op::Sum, cast(x, dtype, loc), std::move(normalized), keepdims, loc);
  const Tensor divisor = frontend::scalar("mean", ScalarOperand(count), dtype);
  return record(make_node(Op::Div, {total.node(), divisor.node()}, loc));
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

Tensor logsumexp(const Tensor& x, Axes axes, bool keepdims, std::source_location loc) try {
  const ir::NodePtr& node = node_of(x, "logsumexp");
  const std::vector<int64_t> normalized = normalize_axes("logsumexp", axes.list(), node->shape);
  const std::vector<int> reduced(normalized.begin(), normalized.end());
  const Tensor values = cast(x, is_floating(node->dtype) ? node->dtype : float32, loc);
  const Tensor largest = max(values, reduced, /*keepdims=*/true, loc);
  // A row whose maximum is infinite (or NaN) is shifted by 0: its sum of exp gives inf or NaN
  // itself, where x - max would give NaN for a row of -inf (whose logsumexp is -inf).
  // The result does not depend on the shift, so neither does its gradient.
  const Tensor shift =
      stop_gradient(where(Traced(largest, loc) - largest == 0, largest, 0, loc), loc);
  const Tensor total = sum(exp(Traced(values, loc) - shift, loc), reduced, /*keepdims=*/true, loc);
  const Tensor result = Traced(log(total, loc), loc) + shift;
  return keepdims ? result : squeeze(result, reduced, loc);
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

Tensor max(const Tensor& x, Axes axes, bool keepdims, std::source_location loc) try {
  const ir::NodePtr& node = node_of(x, "max");
  return reduce(Op::Max, x, normalize_axes("max", axes.list(), node->shape), keepdims, loc);
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

Tensor min(const Tensor& x, Axes axes, bool keepdims, std::source_location loc) try {
  const ir::NodePtr& node = node_of(x, "min");
  return reduce(Op::Min, x, normalize_axes("min", axes.list(), node->shape), keepdims, loc);
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

Tensor argmax(const Tensor& x, int axis, bool keepdims, std::source_location loc) try {
  const ir::NodePtr& node = node_of(x, "argmax");
  return reduce(Op::Argmax, x, {ir::normalize_axis("argmax", axis, node->shape)}, keepdims, loc);
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

Tensor argmin(const Tensor& x, int axis, bool keepdims, std::source_location loc) try {
  const ir::NodePtr& node = node_of(x, "argmin");
  return reduce(Op::Argmin, x, {ir::normalize_axis("argmin", axis, node->shape)}, keepdims, loc);
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

Tensor Tensor::sum(Axes axes, bool keepdims, std::source_location loc) const {
  return lz::sum(*this, std::move(axes), keepdims, loc);
}
Tensor Tensor::mean(Axes axes, bool keepdims, std::source_location loc) const {
  return lz::mean(*this, std::move(axes), keepdims, loc);
}
Tensor Tensor::max(Axes axes, bool keepdims, std::source_location loc) const {
  return lz::max(*this, std::move(axes), keepdims, loc);
}
Tensor Tensor::min(Axes axes, bool keepdims, std::source_location loc) const {
  return lz::min(*this, std::move(axes), keepdims, loc);
}

}  // namespace lz
