#include "ir/type_inference.h"

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>

#include "lazuli/error.h"
#include "support/hot_path.h"

namespace lz::ir {
namespace {

std::string list_string(const std::vector<int64_t>& values) {
  std::ostringstream out;
  out << '[';
  for (size_t i = 0; i < values.size(); ++i) out << (i ? "," : "") << values[i];
  out << ']';
  return out.str();
}

[[noreturn]] void fail(std::string_view op, const std::string& message) {
  throw Error("[" + std::string(op) + "] " + message);
}

/// The same for an operand whose dtype the op does not take.
[[noreturn]] void fail_dtype(std::string_view op, const std::string& message) {
  throw Error("[" + std::string(op) + "] " + message, Error::Kind::Type);
}

void check_arity(const Node& node) {
  const OpInfo& info = op_info(node.op);
  const int count = static_cast<int>(node.inputs.size());
  if (info.arity >= 0 && count != info.arity) {
    fail(info.name,
         "takes " + std::to_string(info.arity) + " inputs, got " + std::to_string(count));
  }
  if (info.arity < 0 && count == 0) fail(info.name, "needs at least one input");
  for (const NodePtr& input : node.inputs) {
    if (input == nullptr) fail(info.name, "has a null input");
  }
}

void check_dimensions(std::string_view op, const Shape& shape) {
  for (int64_t dim : shape) {
    if (dim < 0) fail(op, "shape " + shape_string(shape) + " has a negative dimension");
  }
  check_element_count(op, shape);
}

constexpr char kFloatingOnlyHint[] = "; convert with astype(float32) first";

void check_not_bool(std::string_view op, DType dtype) {
  if (dtype == bool_) fail_dtype(op, "is not defined for bool operands; convert with astype first");
}

/// An integer or bool fill value must be one of the dtype's values: the kernels store it as that
/// dtype, and a wider value would wrap there but not in the interpreter. (The frontend checks it
/// when the op is called; IR text can still hold any int64.)
void check_fits(std::string_view op, const ScalarParam& value, DType dtype) {
  if (is_floating(dtype)) return;
  const auto [lowest, highest] = integer_range(dtype);
  if (value.integer < lowest || value.integer > highest) {
    fail(op, "value " + std::to_string(value.integer) + " does not fit " + dtype_name(dtype) +
                 ", whose values are " + std::to_string(lowest) + ".." + std::to_string(highest));
  }
}

TensorType infer_leaf(const Node& node) {
  const std::string_view op = op_name(node.op);
  check_dimensions(op, node.shape);
  switch (node.op) {
    case Op::Arange:
      if (node.ndim() != 1) fail(op, "result must be 1-d, got shape " + shape_string(node.shape));
      [[fallthrough]];
    case Op::RandomUniform:
      if (node.dtype == bool_) fail(op, "cannot produce bool; use an int or float dtype");
      break;
    case Op::Full: check_fits(op, node.params[0], node.dtype); break;
    case Op::RandomNormal:
      if (!is_floating(node.dtype)) {
        fail_dtype(op, std::string("needs a floating dtype, got ") + dtype_name(node.dtype));
      }
      if (!(node.params[1].floating >= 0)) {
        fail(op, "standard deviation must be >= 0, got " + std::to_string(node.params[1].floating));
      }
      break;
    default: break;
  }
  return {node.dtype, node.shape};
}

TensorType infer_unary(const Node& node) {
  const std::string_view op = op_name(node.op);
  const Node& x = *node.inputs[0];
  switch (node.op) {
    case Op::Astype: return {node.dtype, x.shape};
    case Op::Neg:
    case Op::Abs:
    case Op::Square:
    case Op::Relu: check_not_bool(op, x.dtype); return {x.dtype, x.shape};
    default:
      if (!is_floating(x.dtype)) {
        fail_dtype(op, std::string("needs a floating operand, got ") + dtype_name(x.dtype) +
                           kFloatingOnlyHint);
      }
      return {x.dtype, x.shape};
  }
}

TensorType infer_binary(const Node& node) {
  const std::string_view op = op_name(node.op);
  const Node& a = *node.inputs[0];
  const Node& b = *node.inputs[1];
  if (a.dtype != b.dtype) {
    fail_dtype(op, std::string("operand dtypes ") + dtype_name(a.dtype) + " and " +
                       dtype_name(b.dtype) + " differ; the IR needs one dtype (insert astype)");
  }
  Shape shape = broadcast_shapes(op, a.shape, b.shape);
  if (is_comparison(node.op)) return {bool_, std::move(shape)};
  check_binary_dtype(node.op, a.dtype);
  return {a.dtype, std::move(shape)};
}

TensorType infer_where(const Node& node) {
  const Node& cond = *node.inputs[0];
  const Node& a = *node.inputs[1];
  const Node& b = *node.inputs[2];
  if (cond.dtype != bool_) {
    fail("where", std::string("condition must be bool, got ") + dtype_name(cond.dtype) +
                      "; compare it (x != 0) or use astype(bool_)");
  }
  if (a.dtype != b.dtype) {
    fail_dtype("where", std::string("value dtypes ") + dtype_name(a.dtype) + " and " +
                            dtype_name(b.dtype) +
                            " differ; the IR needs one dtype (insert astype)");
  }
  return {a.dtype, where_shape(cond.shape, a.shape, b.shape)};
}

TensorType infer_reduction(const Node& node) {
  const std::string_view op = op_name(node.op);
  const Node& x = *node.inputs[0];
  for (size_t i = 0; i < node.axes().size(); ++i) {
    const int64_t axis = node.axes()[i];
    if (axis < 0 || axis >= x.ndim()) {
      fail(op, "axis " + std::to_string(axis) + " is out of range for shape " +
                   shape_string(x.shape) + "; the IR needs axes in 0.." +
                   std::to_string(x.ndim() - 1));
    }
    if (i > 0 && axis <= node.axes()[i - 1]) {
      fail(op, "axes " + list_string(node.axes()) + " must be strictly ascending");
    }
  }
  const bool index_reduction = node.op == Op::Argmax || node.op == Op::Argmin;
  if (index_reduction && node.axes().size() != 1) {
    fail(op, "reduces exactly one axis, got axes " + list_string(node.axes()));
  }
  if (node.op == Op::Sum) check_not_bool(op, x.dtype);
  if (node.op != Op::Sum) {
    for (int64_t axis : node.axes()) {
      if (x.shape[axis] == 0) {
        fail(op, "cannot reduce over axis " + std::to_string(axis) + " of shape " +
                     shape_string(x.shape) + ": it is empty and " + std::string(op) +
                     " of zero elements is undefined");
      }
    }
  }
  Shape shape;
  for (int d = 0; d < x.ndim(); ++d) {
    const bool reduced = std::binary_search(node.axes().begin(), node.axes().end(), d);
    if (!reduced)
      shape.push_back(x.shape[d]);
    else if (node.keepdims)
      shape.push_back(1);
  }
  return {index_reduction ? int64 : x.dtype, std::move(shape)};
}

TensorType infer_transpose(const Node& node) {
  const Node& x = *node.inputs[0];
  std::vector<int64_t> sorted = node.axes();
  std::sort(sorted.begin(), sorted.end());
  bool is_permutation = static_cast<int>(sorted.size()) == x.ndim();
  for (size_t i = 0; is_permutation && i < sorted.size(); ++i) {
    is_permutation = sorted[i] == static_cast<int64_t>(i);
  }
  if (!is_permutation) {
    fail("transpose", "permutation " + list_string(node.axes()) + " of shape " +
                          shape_string(x.shape) + " must list each axis 0.." +
                          std::to_string(x.ndim() - 1) + " exactly once");
  }
  Shape shape;
  for (int64_t axis : node.axes()) shape.push_back(x.shape[axis]);
  return {x.dtype, std::move(shape)};
}

TensorType infer_slice(const Node& node) {
  const Node& x = *node.inputs[0];
  if (static_cast<int>(node.starts().size()) != x.ndim() ||
      static_cast<int>(node.steps().size()) != x.ndim() || node.ndim() != x.ndim()) {
    fail("slice", "needs one start, step and extent per axis of shape " + shape_string(x.shape) +
                      ", got starts " + list_string(node.starts()) + ", steps " +
                      list_string(node.steps()) + " and shape " + shape_string(node.shape));
  }
  for (int d = 0; d < x.ndim(); ++d) {
    const int64_t count = node.shape[d];
    if (node.steps()[d] == 0) fail("slice", "step of axis " + std::to_string(d) + " is 0");
    if (count < 0) fail("slice", "shape " + shape_string(node.shape) + " has a negative dimension");
    if (count == 0) continue;
    const int64_t first = node.starts()[d];
    int64_t last = 0;
    const bool overflow = __builtin_mul_overflow(count - 1, node.steps()[d], &last) ||
                          __builtin_add_overflow(first, last, &last);
    if (overflow || first < 0 || first >= x.shape[d] || last < 0 || last >= x.shape[d]) {
      fail("slice", "axis " + std::to_string(d) + " reads indices " + std::to_string(first) + ".." +
                        std::to_string(last) + " outside 0.." + std::to_string(x.shape[d] - 1) +
                        " of shape " + shape_string(x.shape));
    }
  }
  return {x.dtype, node.shape};
}

TensorType infer_concatenate(const Node& node) {
  const Node& first = *node.inputs[0];
  if (node.axes().size() != 1 || node.axes()[0] < 0 || node.axes()[0] >= first.ndim()) {
    fail("concatenate", "axis " + list_string(node.axes()) + " is not a single axis of shape " +
                            shape_string(first.shape));
  }
  const int64_t axis = node.axes()[0];
  Shape shape = first.shape;
  for (size_t i = 1; i < node.inputs.size(); ++i) {
    const Node& other = *node.inputs[i];
    if (other.dtype != first.dtype) {
      fail_dtype("concatenate", std::string("input dtypes ") + dtype_name(first.dtype) + " and " +
                                    dtype_name(other.dtype) + " differ; the IR needs one dtype");
    }
    check_concatenable(first.shape, other.shape, axis);
    if (__builtin_add_overflow(shape[axis], other.shape[axis], &shape[axis])) {
      fail("concatenate",
           "the joined axis " + std::to_string(axis) + " has more elements than fit in int64");
    }
  }
  return {first.dtype, std::move(shape)};
}

TensorType infer_gather(const Node& node) {
  const Node& x = *node.inputs[0];
  const Node& indices = *node.inputs[1];
  if (indices.dtype != int32 && indices.dtype != int64) {
    fail_dtype("gather",
               std::string("indices must be int32 or int64, got ") + dtype_name(indices.dtype));
  }
  if (x.ndim() == 0 || indices.ndim() != x.ndim()) {
    fail("gather", "x " + shape_string(x.shape) + " and indices " + shape_string(indices.shape) +
                       " must have the same rank, at least 1");
  }
  if (node.axes().size() != 1 || node.axes()[0] < 0 || node.axes()[0] >= x.ndim()) {
    fail("gather", "axis " + list_string(node.axes()) + " is not a single axis of shape " +
                       shape_string(x.shape));
  }
  const int64_t axis = node.axes()[0];
  Shape shape(x.ndim());
  for (int d = 0; d < x.ndim(); ++d) {
    const int64_t a = x.shape[d];
    const int64_t b = indices.shape[d];
    if (d != axis && a != b && a != 1 && b != 1) {
      fail("gather", "x " + shape_string(x.shape) + " and indices " + shape_string(indices.shape) +
                         " cannot be broadcast together outside axis " + std::to_string(axis));
    }
    shape[d] = d == axis ? b : (a == 1 ? b : a);
  }
  return {x.dtype, std::move(shape)};
}

TensorType infer_collective(const Node& node) {
  const std::string_view op = op_name(node.op);
  const Node& x = *node.inputs[0];
  const int64_t ranks = node.collective().ranks;
  if (ranks < 1) fail(op, "ranks " + std::to_string(ranks) + " must be a positive count");
  const int64_t root = node.collective().root;
  switch (node.op) {
    case Op::AllSum:
    case Op::ReduceScatter: check_not_bool(op, x.dtype); break;
    case Op::Broadcast:
      if (root < 0 || root >= ranks) {
        fail(op, "root " + std::to_string(root) +
                     " is not a rank of the group: valid ranks are 0.." +
                     std::to_string(ranks - 1));
      }
      break;
    default: break;
  }
  Shape shape = x.shape;
  if (node.op == Op::AllGather) {
    if (shape.empty()) return {x.dtype, {ranks}};
    shape[0] *= ranks;
    check_element_count(op, shape);
  } else if (node.op == Op::ReduceScatter) {
    if (shape.empty() || shape[0] % ranks != 0) {
      fail(op, "axis 0 of " + shape_string(x.shape) + " must split evenly among " +
                   std::to_string(ranks) + " ranks");
    }
    shape[0] /= ranks;
  }
  return {x.dtype, std::move(shape)};
}

TensorType infer_matmul(const Node& node) {
  const Node& a = *node.inputs[0];
  const Node& b = *node.inputs[1];
  // Only for messages: made when one is, as recording a matmul must not format strings.
  const auto shapes = [&] { return shape_string(a.shape) + " and " + shape_string(b.shape); };
  if (a.ndim() < 2 || b.ndim() < 2)
    fail("matmul", "the IR needs operands of rank >= 2, got " + shapes());
  if (a.dtype != b.dtype) {
    fail_dtype("matmul", std::string("operand dtypes ") + dtype_name(a.dtype) + " and " +
                             dtype_name(b.dtype) + " differ; the IR needs one dtype");
  }
  check_not_bool("matmul", a.dtype);
  const int64_t k_a = a.shape[a.ndim() - 1];
  const int64_t k_b = b.shape[b.ndim() - 2];
  if (k_a != k_b) {
    fail("matmul", "shapes " + shapes() + " cannot be multiplied: contraction dimensions " +
                       std::to_string(k_a) + " and " + std::to_string(k_b) + " differ");
  }
  const Shape batch_a(a.shape.begin(), a.shape.end() - 2);
  const Shape batch_b(b.shape.begin(), b.shape.end() - 2);
  Shape shape = broadcast_shapes("matmul", batch_a, batch_b);
  shape.push_back(a.shape[a.ndim() - 2]);
  shape.push_back(b.shape[b.ndim() - 1]);
  return {a.dtype, std::move(shape)};
}

TensorType infer_movement(const Node& node) {
  const Node& x = *node.inputs[0];
  switch (node.op) {
    case Op::Reshape:
      check_dimensions("reshape", node.shape);
      if (node.size() != x.size()) {
        fail("reshape", "cannot reshape " + shape_string(x.shape) + " (" +
                            std::to_string(x.size()) + " elements) to " + shape_string(node.shape) +
                            " (" + std::to_string(node.size()) + " elements)");
      }
      return {x.dtype, node.shape};
    case Op::BroadcastTo: {
      check_dimensions("broadcast_to", node.shape);
      bool valid = x.ndim() <= node.ndim();
      for (int i = 1; valid && i <= x.ndim(); ++i) {
        const int64_t from = x.shape[x.ndim() - i];
        valid = from == 1 || from == node.shape[node.ndim() - i];
      }
      if (x.ndim() > node.ndim()) {
        fail("broadcast_to", "cannot broadcast " + shape_string(x.shape) + " to " +
                                 shape_string(node.shape) +
                                 ": the target has fewer dimensions than the input");
      }
      if (!valid) {
        fail("broadcast_to", "cannot broadcast " + shape_string(x.shape) + " to " +
                                 shape_string(node.shape) +
                                 ": each dimension must equal the target's or be 1");
      }
      return {x.dtype, node.shape};
    }
    case Op::Transpose: return infer_transpose(node);
    case Op::Slice: return infer_slice(node);
    case Op::Gather: return infer_gather(node);
    default: return infer_concatenate(node);
  }
}

}  // namespace

LZ_HOT_PATH Shape broadcast_shapes(std::string_view op, const Shape& a, const Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape result(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t dim_a = i < a.size() ? a[a.size() - 1 - i] : 1;
    const int64_t dim_b = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (dim_a != dim_b && dim_a != 1 && dim_b != 1) {
      fail(op, "shapes " + shape_string(a) + " and " + shape_string(b) +
                   " cannot be broadcast: dimension " + std::to_string(rank - 1 - i) + " is " +
                   std::to_string(dim_a) + " vs " + std::to_string(dim_b) +
                   " (each pair must be equal or one of them 1)");
    }
    result[rank - 1 - i] = dim_a == 1 ? dim_b : dim_a;
  }
  return result;
}

int64_t normalize_axis(std::string_view op, int64_t axis, const Shape& shape) {
  const auto ndim = static_cast<int64_t>(shape.size());
  if (axis < -ndim || axis >= ndim) {
    if (ndim == 0) {
      fail(op, "axis " + std::to_string(axis) + " is out of range: shape () has no axes");
    }
    fail(op, "axis " + std::to_string(axis) + " is out of range for shape " + shape_string(shape) +
                 "; valid axes are " + std::to_string(-ndim) + ".." + std::to_string(ndim - 1));
  }
  return axis < 0 ? axis + ndim : axis;
}

namespace {

TensorType infer_by_kind(const Node& node) {
  switch (op_info(node.op).kind) {
    case OpKind::Leaf: return infer_leaf(node);
    case OpKind::Unary: return infer_unary(node);
    case OpKind::Binary: return infer_binary(node);
    case OpKind::Ternary: return infer_where(node);
    case OpKind::Reduction: return infer_reduction(node);
    case OpKind::Movement: return infer_movement(node);
    case OpKind::LinearAlgebra: return infer_matmul(node);
    case OpKind::Collective: return infer_collective(node);
  }
  fail(op_name(node.op), "unknown op");
}

}  // namespace

LZ_HOT_PATH void check_binary_dtype(Op op, DType dtype) {
  switch (op) {
    case Op::Div:
      if (!is_floating(dtype)) {
        fail_dtype(op_name(op), std::string("needs floating operands, got ") + dtype_name(dtype) +
                                    kFloatingOnlyHint);
      }
      break;
    case Op::Add:
    case Op::Sub:
    case Op::Mul:
    case Op::Pow: check_not_bool(op_name(op), dtype); break;
    default: break;
  }
}

IntegerRange integer_range(DType dtype) {
  if (dtype == bool_) return {0, 1};
  if (dtype == int32) return {INT32_MIN, INT32_MAX};
  return {INT64_MIN, INT64_MAX};
}

void check_concatenable(const Shape& first, const Shape& other, int64_t axis) {
  bool compatible = other.size() == first.size();
  for (size_t d = 0; compatible && d < first.size(); ++d) {
    compatible = static_cast<int64_t>(d) == axis || other[d] == first[d];
  }
  if (!compatible) {
    fail("concatenate", "shapes " + shape_string(first) + " and " + shape_string(other) +
                            " must match except on axis " + std::to_string(axis));
  }
}

Shape where_shape(const Shape& cond, const Shape& a, const Shape& b) {
  try {
    return broadcast_shapes("where", broadcast_shapes("where", cond, a), b);
  } catch (const Error&) {
    fail("where", "shapes " + shape_string(cond) + " (condition), " + shape_string(a) + " and " +
                      shape_string(b) +
                      " cannot be broadcast together (each dimension must agree or be 1)");
  }
}

LZ_HOT_PATH TensorType infer_type(const Node& node) {
  check_arity(node);
  TensorType type = infer_by_kind(node);
  // Broadcasting valid operands can still describe more elements than an int64 counts.
  check_element_count(op_name(node.op), type.shape);
  return type;
}

LZ_HOT_PATH void check_element_count(std::string_view op, const Shape& shape) {
  // 2^60 elements of the widest dtype (8 bytes) still count their bytes in an int64.
  constexpr int64_t kMaxElements = int64_t{1} << 60;
  int64_t count = 1;
  bool overflow = false;
  for (int64_t dim : shape) {
    if (dim == 0) return;  // zero elements, however large the other dimensions
    overflow = overflow || __builtin_mul_overflow(count, dim, &count) || count > kMaxElements;
  }
  if (overflow) {
    fail(op, "shape " + shape_string(shape) + " has more than 2^60 elements, more than any buffer");
  }
}

}  // namespace lz::ir
