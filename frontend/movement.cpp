// Movement ops: reshape, transpose, broadcast_to, slice, concatenate, expand_dims, squeeze,
// take and take_along_axis.
#include <algorithm>

#include "frontend/recording.h"
#include "ir/type_inference.h"
#include "lazuli/error.h"

namespace lz {
namespace {

using frontend::make_node;
using frontend::node_of;
using frontend::record;
using ir::Op;

Tensor reshape_to(const Tensor& x, Shape shape, std::source_location loc) {
  if (x.node()->shape == shape) return x;
  ir::NodePtr node = make_node(Op::Reshape, {x.node()}, loc);
  node->shape = std::move(shape);
  return record(std::move(node));
}

/// Python's slice.indices: the first index and the count of x[start:stop:step] on an axis of
/// `extent` elements. Bounds past either end are clamped; negative bounds count from the end.
std::pair<int64_t, int64_t> slice_range(int64_t start, int64_t stop, int64_t step, int64_t extent) {
  const auto adjust = [&](int64_t bound) {
    if (bound < 0) {
      bound += extent;  // cannot overflow: extent >= 0
      if (bound < 0) bound = step < 0 ? -1 : 0;
    } else if (bound >= extent) {
      bound = step < 0 ? extent - 1 : extent;
    }
    return bound;
  };
  const int64_t first = adjust(start);
  const int64_t last = adjust(stop);
  if (step > 0) {
    if (last <= first) return {0, 0};
    return {first, (last - first - 1) / step + 1};
  }
  if (first <= last) return {0, 0};
  const int64_t magnitude = step == INT64_MIN ? INT64_MAX : -step;
  return {first, (first - last - 1) / magnitude + 1};
}

std::string list_string(const std::vector<int64_t>& values) {
  std::string text = "[";
  for (size_t i = 0; i < values.size(); ++i) text += (i ? "," : "") + std::to_string(values[i]);
  return text + "]";
}

/// Throws "[op] indices must be int32 or int64" for any other dtype.
void check_index_dtype(std::string_view op, const ir::Node& indices) {
  if (indices.dtype != int32 && indices.dtype != int64) {
    throw Error("[" + std::string(op) + "] indices must be int32 or int64, got " +
                    dtype_name(indices.dtype) + "; convert them with astype(int64)",
                Error::Kind::Type);
  }
}

/// The gather node reading x where `indices` (of x's rank) point along non-negative `axis`.
Tensor gather(const ir::NodePtr& x, const ir::NodePtr& indices, int64_t axis,
              std::source_location loc) {
  ir::NodePtr gathered = make_node(Op::Gather, {x, indices}, loc);
  gathered->set_attributes().axes = {axis};
  return record(std::move(gathered));
}

}  // namespace

Tensor reshape(const Tensor& x, Shape shape, std::source_location loc) try {
  const ir::NodePtr& node = node_of(x, "reshape");
  int inferred_axis = -1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == -1) {
      if (inferred_axis >= 0) {
        throw Error("[reshape] only one dimension of " + shape_string(shape) + " can be -1");
      }
      inferred_axis = static_cast<int>(d);
    } else if (shape[d] < 0) {
      throw Error("[reshape] shape " + shape_string(shape) +
                  " has a negative dimension other than -1");
    }
  }
  Shape known_dims = shape;
  if (inferred_axis >= 0) known_dims[inferred_axis] = 1;
  ir::check_element_count("reshape", known_dims);
  const int64_t known = shape_size(known_dims);
  if (inferred_axis >= 0) {
    if (known == 0 || node->size() % known != 0) {
      throw Error("[reshape] cannot reshape " + shape_string(node->shape) + " (" +
                  std::to_string(node->size()) + " elements) to " + shape_string(shape) +
                  ": no value of -1 fits");
    }
    shape[inferred_axis] = node->size() / known;
  }
  if (node->shape == shape) return x;
  ir::NodePtr reshaped = make_node(Op::Reshape, {node}, loc);
  reshaped->shape = std::move(shape);
  return record(std::move(reshaped));
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

Tensor transpose(const Tensor& x, std::vector<int> perm, std::source_location loc) try {
  const ir::NodePtr& node = node_of(x, "transpose");
  ir::NodePtr transposed = make_node(Op::Transpose, {node}, loc);
  std::vector<int64_t>& permutation = transposed->set_attributes().axes;
  if (perm.empty()) {
    for (int d = node->ndim() - 1; d >= 0; --d) permutation.push_back(d);
  } else {
    // Checked here, against the axes as the user wrote them.
    std::vector<bool> seen(node->ndim(), false);
    for (int axis : perm) {
      const int64_t normalized = axis < 0 ? axis + node->ndim() : axis;
      const bool valid = perm.size() == seen.size() && normalized >= 0 &&
                         normalized < node->ndim() && !seen[normalized];
      if (!valid) {
        std::vector<int64_t> written(perm.begin(), perm.end());
        throw Error("[transpose] permutation " + list_string(written) + " of shape " +
                    shape_string(node->shape) + " must list each axis exactly once (0.." +
                    std::to_string(node->ndim() - 1) + ", or negative from the end)");
      }
      seen[normalized] = true;
      permutation.push_back(normalized);
    }
  }
  return record(std::move(transposed));
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

Tensor broadcast_to(const Tensor& x, Shape shape, std::source_location loc) try {
  const ir::NodePtr& node = node_of(x, "broadcast_to");
  if (node->shape == shape) return x;
  ir::NodePtr broadcast = make_node(Op::BroadcastTo, {node}, loc);
  broadcast->shape = std::move(shape);
  return record(std::move(broadcast));
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

Tensor slice(const Tensor& x, std::vector<int64_t> start, std::vector<int64_t> stop,
             std::vector<int64_t> step, std::source_location loc) try {
  const ir::NodePtr& node = node_of(x, "slice");
  const size_t ndim = node->shape.size();
  if (start.size() != stop.size() || (!step.empty() && step.size() != start.size()) ||
      start.size() > ndim) {
    throw Error("[slice] start " + list_string(start) + ", stop " + list_string(stop) +
                " and step " + list_string(step) +
                " must have one entry per sliced axis (at most " + std::to_string(ndim) +
                " for shape " + shape_string(node->shape) + ")");
  }
  ir::NodePtr sliced = make_node(Op::Slice, {node}, loc);
  ir::NodeAttributes& attributes = sliced->set_attributes();
  for (size_t d = 0; d < ndim; ++d) {
    const int64_t extent = node->shape[d];
    if (d >= start.size()) {
      attributes.starts.push_back(0);
      attributes.steps.push_back(1);
      sliced->shape.push_back(extent);
      continue;
    }
    const int64_t axis_step = step.empty() ? 1 : step[d];
    if (axis_step == 0) {
      throw Error("[slice] step of axis " + std::to_string(d) + " of shape " +
                  shape_string(node->shape) + " is 0; use a positive or negative step");
    }
    const auto [first, count] = slice_range(start[d], stop[d], axis_step, extent);
    attributes.starts.push_back(first);
    attributes.steps.push_back(axis_step);
    sliced->shape.push_back(count);
  }
  return record(std::move(sliced));
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

Tensor concatenate(const std::vector<Tensor>& tensors, int axis, std::source_location loc) try {
  if (tensors.empty()) throw Error("[concatenate] needs at least one tensor");
  const ir::NodePtr& first = node_of(tensors[0], "concatenate");
  if (first->ndim() == 0) {
    throw Error(
        "[concatenate] zero-dimensional tensors cannot be concatenated; use "
        "expand_dims first");
  }
  const int64_t normalized = ir::normalize_axis("concatenate", axis, first->shape);
  DType dtype = first->dtype;
  for (const Tensor& tensor : tensors) {
    dtype = frontend::promote(dtype, node_of(tensor, "concatenate")->dtype);
  }
  if (tensors.size() == 1) return tensors[0];
  // Shapes are checked before any cast is recorded, so a rejected op records nothing.
  for (const Tensor& tensor : tensors) {
    ir::check_concatenable(first->shape, tensor.node()->shape, normalized);
  }
  std::vector<ir::NodePtr> inputs;
  for (const Tensor& tensor : tensors) inputs.push_back(frontend::cast(tensor, dtype, loc).node());
  ir::NodePtr joined = make_node(Op::Concatenate, std::move(inputs), loc);
  joined->set_attributes().axes = {normalized};
  return record(std::move(joined));
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

Tensor expand_dims(const Tensor& x, int axis, std::source_location loc) try {
  const ir::NodePtr& node = node_of(x, "expand_dims");
  Shape shape = node->shape;
  const int result_ndim = node->ndim() + 1;  // the new axis may be one past the last
  if (axis < -result_ndim || axis >= result_ndim) {
    throw Error("[expand_dims] axis " + std::to_string(axis) + " is out of range for shape " +
                shape_string(shape) + "; valid axes are " + std::to_string(-result_ndim) + ".." +
                std::to_string(result_ndim - 1));
  }
  shape.insert(shape.begin() + (axis < 0 ? axis + result_ndim : axis), 1);
  return reshape_to(x, std::move(shape), loc);
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

Tensor squeeze(const Tensor& x, std::vector<int> axes, std::source_location loc) try {
  const ir::NodePtr& node = node_of(x, "squeeze");
  std::vector<bool> removed(node->shape.size(), false);
  if (axes.empty()) {
    for (size_t d = 0; d < node->shape.size(); ++d) removed[d] = node->shape[d] == 1;
  }
  for (int axis : axes) {
    const int64_t d = ir::normalize_axis("squeeze", axis, node->shape);
    if (removed[d]) {
      throw Error("[squeeze] axis " + std::to_string(axis) + " of shape " +
                  shape_string(node->shape) + " is given twice");
    }
    if (node->shape[d] != 1) {
      throw Error("[squeeze] cannot squeeze axis " + std::to_string(axis) + " of shape " +
                  shape_string(node->shape) + ": its size is " + std::to_string(node->shape[d]) +
                  ", not 1");
    }
    removed[d] = true;
  }
  Shape shape;
  for (size_t d = 0; d < node->shape.size(); ++d) {
    if (!removed[d]) shape.push_back(node->shape[d]);
  }
  return reshape_to(x, std::move(shape), loc);
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

Tensor take_along_axis(const Tensor& x, const Tensor& indices, int axis,
                       std::source_location loc) try {
  const ir::NodePtr& node = node_of(x, "take_along_axis");
  const ir::NodePtr& index_node = node_of(indices, "take_along_axis");
  check_index_dtype("take_along_axis", *index_node);
  if (node->ndim() == 0 || index_node->ndim() != node->ndim()) {
    throw Error("[take_along_axis] x " + shape_string(node->shape) + " and indices " +
                shape_string(index_node->shape) +
                " must have the same number of dimensions, at least 1");
  }
  const int64_t normalized = ir::normalize_axis("take_along_axis", axis, node->shape);
  for (int d = 0; d < node->ndim(); ++d) {
    const int64_t a = node->shape[d];
    const int64_t b = index_node->shape[d];
    if (d != normalized && a != b && a != 1 && b != 1) {
      throw Error("[take_along_axis] x " + shape_string(node->shape) + " and indices " +
                  shape_string(index_node->shape) + " differ on axis " + std::to_string(d) +
                  "; outside axis " + std::to_string(axis) +
                  " their extents must match or one be 1");
    }
  }
  return gather(node, index_node, normalized, loc);
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

Tensor take(const Tensor& x, const Tensor& indices, int axis, std::source_location loc) try {
  const ir::NodePtr& node = node_of(x, "take");
  const ir::NodePtr& index_node = node_of(indices, "take");
  check_index_dtype("take", *index_node);
  if (node->ndim() == 0) {
    throw Error("[take] x is zero-dimensional and has no axis " + std::to_string(axis) +
                "; take without an axis reads it flattened");
  }
  const int64_t a = ir::normalize_axis("take", axis, node->shape);
  const Shape& x_shape = node->shape;
  const Shape& index_shape = index_node->shape;
  const auto count = static_cast<int64_t>(index_shape.size());
  // x keeps its axes with the indices' leading ones inserted before `axis` as size 1, the
  // indices get x's other axes as size 1: one gather along the indices' last axis then reads
  // every index for every slice. A 0-d index gathers one position, whose axis then goes.
  Shape x_view(x_shape.begin(), x_shape.begin() + a);
  x_view.insert(x_view.end(), std::max<int64_t>(count - 1, 0), 1);
  x_view.insert(x_view.end(), x_shape.begin() + a, x_shape.end());
  Shape index_view(a, 1);
  index_view.insert(index_view.end(), index_shape.begin(), index_shape.end());
  if (count == 0) index_view.push_back(1);
  index_view.insert(index_view.end(), x_shape.size() - a - 1, 1);
  const int64_t gather_axis = a + std::max<int64_t>(count - 1, 0);
  Tensor gathered = gather(reshape_to(x, x_view, loc).node(),
                           reshape_to(indices, index_view, loc).node(), gather_axis, loc);
  if (count > 0) return gathered;
  Shape result(x_shape.begin(), x_shape.begin() + a);
  result.insert(result.end(), x_shape.begin() + a + 1, x_shape.end());
  return reshape_to(gathered, std::move(result), loc);
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

Tensor take(const Tensor& x, const Tensor& indices, std::source_location loc) try {
  const ir::NodePtr& node = node_of(x, "take");
  return take(reshape_to(x, {node->size()}, loc), indices, 0, loc);
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

Tensor Tensor::reshape(Shape shape, std::source_location loc) const {
  return lz::reshape(*this, std::move(shape), loc);
}
Tensor Tensor::transpose(std::vector<int> perm, std::source_location loc) const {
  return lz::transpose(*this, std::move(perm), loc);
}

}  // namespace lz
