// The typing rules of the IR: the dtype and shape each op produces from its inputs.
//
// The IR is strict where the frontend is lenient. The frontend applies type promotion and inserts
// `astype` nodes, so in the IR:
//  - binary ops and `where`'s two values have operands of one dtype (shapes broadcast as numpy);
//    comparisons give bool, everything else keeps the operand dtype;
//  - `div`, `exp`, `log`, `sqrt`, `rsqrt`, `sin`, `cos`, `tanh`, `sigmoid` take floating operands;
//  - `neg`, `abs`, `square`, `relu`, `add`, `sub`, `mul`, `pow`, `matmul` take no bool operands;
//  - `where`'s condition is bool;
//  - `sum` keeps its input dtype (the frontend casts bool/int32 to int64 first);
//  - `argmax` and `argmin` give int64; `random_normal` is floating only;
//  - `gather`'s indices are int32 or int64, of x's rank, broadcasting with x off the axis;
//  - collectives keep the operand's dtype and shape, except that `all_gather` multiplies axis 0
//    by the ranks (a 0-d operand gives one element per rank) and `reduce_scatter` divides it
//    (evenly); `all_sum` and `reduce_scatter` take no bool operands.
// Errors are lz::Error with the op's name in brackets, the shapes/dtypes and what would be valid.
#pragma once

#include <span>

#include "ir/node.h"
#include "lazuli/dtype.h"

namespace lz::ir {

struct TensorType {
  DType dtype;
  Shape shape;
  friend bool operator==(const TensorType&, const TensorType&) = default;
};

/// The type `node` must have given its op, inputs and attributes. For ops whose result shape is
/// itself the attribute (leaves, reshape, broadcast_to) or whose dtype is (leaves, astype), the
/// node's own shape/dtype is validated and returned. Throws lz::Error when the node is invalid.
TensorType infer_type(const Node& node);

/// numpy broadcasting of two shapes; throws "[op] shapes (3,4) and (5) cannot be broadcast ...".
Shape broadcast_shapes(std::string_view op, const Shape& a, const Shape& b);

/// Throws "[add] is not defined for bool operands ..." (and likewise) unless binary `op` is
/// defined for operands of `dtype`: div needs floating ones; add, sub, mul and pow no bools.
void check_binary_dtype(Op op, DType dtype);

/// The values of an integer or bool dtype, lowest..highest.
struct IntegerRange {
  int64_t lowest;
  int64_t highest;
};
IntegerRange integer_range(DType dtype);

/// Throws "[concatenate] shapes (2,3) and (2,4) must match except on axis 0" unless `other`
/// can be joined to `first` on non-negative `axis`.
void check_concatenable(const Shape& first, const Shape& other, int64_t axis);

/// The shape of where(cond, a, b): the three shapes broadcast together. Throws
/// "[where] shapes (2,3) (condition), (4) and () cannot be broadcast together ...".
Shape where_shape(const Shape& cond, const Shape& a, const Shape& b);

/// Throws "[op] shape (...) has more than 2^60 elements" (so a byte count always fits int64).
/// Dimensions must already be non-negative.
void check_element_count(std::string_view op, const Shape& shape);

/// `axis` in [-ndim, ndim) made non-negative; throws "[op] axis 2 is out of range ...".
int64_t normalize_axis(std::string_view op, int64_t axis, const Shape& shape);

}  // namespace lz::ir
