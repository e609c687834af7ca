// softmax and log_softmax, recorded as the numerically stable composition of primitives
// (subtract the maximum before exponentiating), which fusion later turns into few kernels.
#include "frontend/recording.h"
#include "ir/type_inference.h"

namespace lz {
namespace {

/// x - max(x, axis) in a floating dtype: every element <= 0, so exp cannot overflow.
Tensor shifted_by_max(const Tensor& x, int64_t axis, std::source_location loc) {
  const DType dtype = is_floating(x.dtype()) ? x.dtype() : float32;
  const Tensor values = frontend::cast(x, dtype, loc);
  const Tensor largest = max(values, {static_cast<int>(axis)}, /*keepdims=*/true, loc);
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

}  // namespace lz
