// Reductions: sum, max, min over a set of axes; argmax and argmin over one axis.
#include <algorithm>
#include <cmath>
#include <limits>

#include "reference/interpreter_internal.h"

namespace lz::reference::detail {
namespace {

/// For each input dimension, the stride of the output element it contributes to: 0 on reduced
/// axes. With or without keepdims the output has the row-major layout of the input shape with
/// the reduced axes set to 1.
std::vector<int64_t> reduction_output_strides(const ir::Node& node) {
  Shape kept = node.inputs[0]->shape;
  for (int64_t axis : node.axes()) kept[axis] = 1;
  std::vector<int64_t> strides = contiguous_strides(kept);
  for (int64_t axis : node.axes()) strides[axis] = 0;
  return strides;
}

/// Visits the input in row-major order: accumulate(output offset, element).
template <class T, class Accumulate>
void reduce(const ir::Node& node, const T* in, Accumulate accumulate) {
  const std::vector<int64_t> out_strides = reduction_output_strides(node);
  walk_strided<1>(node.inputs[0]->shape, {out_strides.data()}, {0},
                  [&](int64_t i, const std::array<int64_t, 1>& out_offset) {
                    accumulate(out_offset[0], in[i]);
                  });
}

template <class T>
void sum(const ir::Node& node, const T* in, T* out) {
  const int64_t size = node.size();
  if constexpr (kIsFloating<T>) {
    // Accumulated in double in row-major order of the input, rounded once at the end.
    std::vector<double> total(size, 0.0);
    reduce(node, in, [&](int64_t o, T x) { total[o] += static_cast<double>(x); });
    for (int64_t o = 0; o < size; ++o) out[o] = static_cast<T>(total[o]);
  } else if constexpr (kIsInteger<T>) {
    std::fill(out, out + size, T{0});
    reduce(node, in, [&](int64_t o, T x) { out[o] = wrapping_add(out[o], x); });
  } else {
    fail_unsupported_dtype(node, node.inputs[0]->dtype);
  }
}

/// Max (is_max) or min. A NaN anywhere makes the result NaN; for bool, max is any and min is all.
template <class T>
void extremum(const ir::Node& node, const T* in, T* out, bool is_max) {
  const int64_t size = node.size();
  // Start from the identity of the operation; reductions over zero elements never get here.
  T identity;
  if constexpr (kIsFloating<T>) {
    identity = is_max ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
  } else {
    identity = is_max ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
  }
  std::fill(out, out + size, identity);
  reduce(node, in, [&](int64_t o, T x) {
    T& best = out[o];
    if constexpr (kIsFloating<T>) {
      if (std::isnan(best)) return;
      if (std::isnan(x)) {
        best = x;
        return;
      }
    }
    if (is_max ? x > best : x < best) best = x;
  });
}

/// Index of the first maximum (is_max) or minimum along node.axes()[0]; the first NaN counts as
/// either, as in numpy.
template <class T>
void arg_extremum(const ir::Node& node, const T* in, int64_t* out, bool is_max) {
  const Shape& shape = node.inputs[0]->shape;
  const int64_t axis = node.axes()[0];
  int64_t outer = 1;
  int64_t inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= shape[d];
  for (size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];
  const int64_t length = shape[axis];
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const T* line = in + o * length * inner + i;
      int64_t best = 0;
      for (int64_t j = 0; j < length; ++j) {
        const T x = line[j * inner];
        if constexpr (kIsFloating<T>) {
          if (std::isnan(x)) {
            best = j;
            break;
          }
        }
        if (is_max ? x > line[best * inner] : x < line[best * inner]) best = j;
      }
      out[o * inner + i] = best;
    }
  }
}

}  // namespace

void interpret_reduction(const ir::Node& node, const memory::Buffer& x, memory::Buffer& out) {
  visit_dtype(x.dtype(), [&]<class T>(std::type_identity<T>) {
    const T* in = x.data_as<T>();
    switch (node.op) {
      case ir::Op::Sum: return sum(node, in, out.data_as<T>());
      case ir::Op::Max: return extremum(node, in, out.data_as<T>(), /*is_max=*/true);
      case ir::Op::Min: return extremum(node, in, out.data_as<T>(), /*is_max=*/false);
      case ir::Op::Argmax: return arg_extremum(node, in, out.data_as<int64_t>(), true);
      case ir::Op::Argmin: return arg_extremum(node, in, out.data_as<int64_t>(), false);
      default: fail_unsupported_dtype(node, x.dtype());
    }
  });
}

}  // namespace lz::reference::detail
