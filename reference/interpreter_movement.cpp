// Movement ops: reshape, transpose, broadcast_to, slice, concatenate, gather. They only move
// elements, so they copy bytes or elements without looking at the values (gather looks at its
// indices only).
#include <cstring>
#include <limits>

#include "reference/interpreter_internal.h"

namespace lz::reference::detail {
namespace {

/// out[i] = in[offset], with offset walking the node's shape under `strides` from `start`.
void gather(const ir::Node& node, const memory::Buffer& x, const std::vector<int64_t>& strides,
            int64_t start, memory::Buffer& out) {
  visit_dtype(node.dtype, [&]<class T>(std::type_identity<T>) {
    const T* in = x.data_as<T>();
    T* result = out.data_as<T>();
    walk_strided<1>(
        node.shape, {strides.data()}, {start},
        [&](int64_t i, const std::array<int64_t, 1>& offset) { result[i] = in[offset[0]]; });
  });
}

/// Output dimension d reads input dimension perm[d].
void transpose(const ir::Node& node, const memory::Buffer& x, memory::Buffer& out) {
  const std::vector<int64_t> in_strides = contiguous_strides(node.inputs[0]->shape);
  std::vector<int64_t> strides(node.axes().size());
  for (size_t d = 0; d < node.axes().size(); ++d) strides[d] = in_strides[node.axes()[d]];
  gather(node, x, strides, 0, out);
}

/// out[i_0, ...] = in[starts[0] + i_0 * steps[0], ...].
void slice(const ir::Node& node, const memory::Buffer& x, memory::Buffer& out) {
  const std::vector<int64_t> in_strides = contiguous_strides(node.inputs[0]->shape);
  std::vector<int64_t> strides(in_strides.size());
  int64_t start = 0;
  for (size_t d = 0; d < in_strides.size(); ++d) {
    // An axis of one element (or none) never steps, and its step may be any int64: the product
    // could overflow. Otherwise every stepped index lies in the input, and so does the product.
    strides[d] = node.shape[d] <= 1 ? 0 : in_strides[d] * node.steps()[d];
    start += in_strides[d] * node.starts()[d];
  }
  gather(node, x, strides, start, out);
}

/// Each input contributes a block of (its extent on the axis) x (the inner extent) elements to
/// every row of the outer dimensions, in input order.
void concatenate(const ir::Node& node, std::span<const memory::Buffer* const> inputs,
                 memory::Buffer& out) {
  const int64_t axis = node.axes()[0];
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= node.shape[d];
  const int64_t out_row_bytes = outer == 0 ? 0 : out.bytes() / outer;
  auto* result = static_cast<char*>(out.data());
  int64_t column = 0;  // where the current input's block starts within an output row, in bytes
  for (size_t k = 0; k < inputs.size(); ++k) {
    const int64_t block_bytes = outer == 0 ? 0 : inputs[k]->bytes() / outer;
    const auto* in = static_cast<const char*>(inputs[k]->data());
    for (int64_t o = 0; o < outer && block_bytes > 0; ++o) {
      std::memcpy(result + o * out_row_bytes + column, in + o * block_bytes, block_bytes);
    }
    column += block_bytes;
  }
}

/// What gather reads for an index outside its axis: NaN for floating dtypes, the lowest value for
/// integers and true for bool, so that a bad index shows in the result (JAX's "fill" mode).
template <class T>
T gather_fill() {
  if constexpr (std::is_same_v<T, bool>) {
    return true;
  } else if constexpr (kIsFloating<T>) {
    return std::numeric_limits<T>::quiet_NaN();
  } else {
    return std::numeric_limits<T>::lowest();
  }
}

/// out[..., i, ...] = x[..., indices[..., i, ...], ...] along the axis, x and indices broadcast
/// against each other on the other axes; a negative index counts from the end.
void gather_along_axis(const ir::Node& node, const memory::Buffer& x, const memory::Buffer& indices,
                       memory::Buffer& out) {
  const ir::Node& x_node = *node.inputs[0];
  const ir::Node& indices_node = *node.inputs[1];
  const int64_t axis = node.axes()[0];
  const int64_t extent = x_node.shape[axis];
  std::vector<int64_t> x_strides = broadcast_strides(x_node.shape, node.shape);
  const int64_t axis_stride = contiguous_strides(x_node.shape)[axis];
  x_strides[axis] = 0;  // the axis is read where the index points
  const std::vector<int64_t> index_strides = broadcast_strides(indices_node.shape, node.shape);
  visit_dtype(node.dtype, [&]<class T>(std::type_identity<T>) {
    const T* in = x.data_as<T>();
    T* result = out.data_as<T>();
    const auto read_index = [&](int64_t offset) {
      return indices_node.dtype == int32 ? int64_t{indices.data_as<int32_t>()[offset]}
                                         : indices.data_as<int64_t>()[offset];
    };
    walk_strided<2>(node.shape, {x_strides.data(), index_strides.data()}, {0, 0},
                    [&](int64_t i, const std::array<int64_t, 2>& offset) {
                      int64_t position = read_index(offset[1]);
                      if (position < 0) position += extent;
                      result[i] = position >= 0 && position < extent
                                      ? in[offset[0] + position * axis_stride]
                                      : gather_fill<T>();
                    });
  });
}

}  // namespace

void interpret_movement(const ir::Node& node, std::span<const memory::Buffer* const> inputs,
                        memory::Buffer& out) {
  const memory::Buffer& x = *inputs[0];
  switch (node.op) {
    case ir::Op::Reshape:
      // Same elements in the same row-major order.
      if (out.bytes() > 0) std::memcpy(out.data(), x.data(), out.bytes());
      return;
    case ir::Op::Transpose: return transpose(node, x, out);
    case ir::Op::BroadcastTo:
      return gather(node, x, broadcast_strides(node.inputs[0]->shape, node.shape), 0, out);
    case ir::Op::Slice: return slice(node, x, out);
    case ir::Op::Concatenate: return concatenate(node, inputs, out);
    case ir::Op::Gather: return gather_along_axis(node, x, *inputs[1], out);
    default: fail_unsupported_dtype(node, node.dtype);
  }
}

}  // namespace lz::reference::detail
