// What the interpreter's files share: dtype dispatch, element conversion, strided walks over
// row-major index spaces, and one entry point per op family.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include "ir/node.h"
#include "lazuli/dtype.h"
#include "memory/buffer.h"
#include "reference/scalar_semantics.h"

namespace lz::reference::detail {

/// Calls visit(std::type_identity<T>{}) with T the C++ element type of `dtype`.
template <class Visit>
decltype(auto) visit_dtype(DType dtype, Visit&& visit) {
  switch (dtype) {
    case DType::Float32: return visit(std::type_identity<float>{});
    case DType::Float64: return visit(std::type_identity<double>{});
    case DType::Int32: return visit(std::type_identity<int32_t>{});
    case DType::Int64: return visit(std::type_identity<int64_t>{});
    case DType::Bool: break;
  }
  return visit(std::type_identity<bool>{});
}

template <class T>
inline constexpr bool kIsFloating = std::is_floating_point_v<T>;
template <class T>
inline constexpr bool kIsInteger = std::is_integral_v<T> && !std::is_same_v<T, bool>;

/// `value` converted to element type To by the rules of `astype`.
template <class To, class From>
To convert_element(From value) {
  if constexpr (std::is_same_v<To, bool>) {
    return value != From{0};  // NaN != 0, so NaN becomes true
  } else if constexpr (kIsInteger<To> && kIsFloating<From>) {
    return saturating_float_to_integer<To>(static_cast<double>(value));
  } else {
    // int -> int wraps (two's complement), bool -> number is 0 or 1, int -> float and
    // float64 -> float32 round to nearest.
    return static_cast<To>(value);
  }
}

/// Row-major strides, in elements, of a contiguous tensor of `shape`.
std::vector<int64_t> contiguous_strides(const Shape& shape);

/// Strides that read a contiguous tensor of `shape` as if broadcast (numpy rules) to `target`:
/// one entry per dimension of `target`, 0 where `shape` has size 1 or no dimension.
std::vector<int64_t> broadcast_strides(const Shape& shape, const Shape& target);

/// For a matmul operand of `shape` (matrices in its last two dimensions): the stride, in
/// elements, between its consecutive matrices along each dimension of the output's `batch`
/// (0 where the operand is broadcast).
std::vector<int64_t> matmul_batch_strides(const Shape& shape, const Shape& batch);

/// Visits every index of `shape` in row-major order, calling visit(position, offsets): position
/// counts 0, 1, 2, ... and offsets[k] = start[k] + sum over d of index[d] * strides[k][d]. Each
/// strides[k] has one entry per dimension of `shape`.
///
/// The walk first drops dimensions of size 1 and merges each dimension into the next one when
/// every operand steps over the pair as over one longer dimension, so that the innermost loop is
/// as long as possible; the outer dimensions then advance like an odometer. There is no division
/// and no allocation per element.
template <size_t N, class Visit>
void walk_strided(const Shape& shape, const std::array<const int64_t*, N>& strides,
                  std::array<int64_t, N> offsets, Visit&& visit) {
  if (shape_size(shape) == 0) return;
  std::vector<int64_t> extents;
  std::vector<std::array<int64_t, N>> steps;  // steps[d][k]: stride of operand k on dimension d
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    std::array<int64_t, N> step;
    for (size_t k = 0; k < N; ++k) step[k] = strides[k][d];
    bool mergeable = !extents.empty();
    for (size_t k = 0; k < N && mergeable; ++k) mergeable = steps.back()[k] == step[k] * shape[d];
    if (mergeable) {
      extents.back() *= shape[d];
      steps.back() = step;
    } else {
      extents.push_back(shape[d]);
      steps.push_back(step);
    }
  }
  if (extents.empty()) {
    visit(int64_t{0}, offsets);
    return;
  }
  const int inner = static_cast<int>(extents.size()) - 1;
  std::vector<int64_t> index(extents.size(), 0);
  int64_t position = 0;
  while (true) {
    for (int64_t i = 0; i < extents[inner]; ++i) {
      visit(position++, offsets);
      for (size_t k = 0; k < N; ++k) offsets[k] += steps[inner][k];
    }
    for (size_t k = 0; k < N; ++k) offsets[k] -= extents[inner] * steps[inner][k];
    int d = inner - 1;
    for (; d >= 0; --d) {
      ++index[d];
      for (size_t k = 0; k < N; ++k) offsets[k] += steps[d][k];
      if (index[d] < extents[d]) break;
      for (size_t k = 0; k < N; ++k) offsets[k] -= extents[d] * steps[d][k];
      index[d] = 0;
    }
    if (d < 0) return;
  }
}

/// Throws "[op] is not defined for <dtype> operands" (the IR's type rules prevent it).
[[noreturn]] void fail_unsupported_dtype(const ir::Node& node, DType dtype);

// One entry point per op family. Each writes the node's result into `out`, which is allocated
// with the node's dtype and size; input shapes and dtypes are those of node.inputs.
void interpret_leaf(const ir::Node& node, memory::Buffer& out);
void interpret_unary(const ir::Node& node, const memory::Buffer& x, memory::Buffer& out);
void interpret_binary(const ir::Node& node, const memory::Buffer& a, const memory::Buffer& b,
                      memory::Buffer& out);
void interpret_where(const ir::Node& node, const memory::Buffer& cond, const memory::Buffer& a,
                     const memory::Buffer& b, memory::Buffer& out);
void interpret_reduction(const ir::Node& node, const memory::Buffer& x, memory::Buffer& out);
void interpret_movement(const ir::Node& node, std::span<const memory::Buffer* const> inputs,
                        memory::Buffer& out);
void interpret_matmul(const ir::Node& node, const memory::Buffer& a, const memory::Buffer& b,
                      memory::Buffer& out);

}  // namespace lz::reference::detail
