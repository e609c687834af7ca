// Element types and shapes: the vocabulary every other lazuli header uses.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

#include "lazuli/shape.h"

namespace lz {

/// Element type of a tensor. Booleans are stored as one byte (0 or 1).
enum class DType : uint8_t { Float32, Float64, Int32, Int64, Bool };

inline constexpr DType float32 = DType::Float32;
inline constexpr DType float64 = DType::Float64;
inline constexpr DType int32 = DType::Int32;
inline constexpr DType int64 = DType::Int64;
inline constexpr DType bool_ = DType::Bool;

/// All dtypes, in the order of the enum (for tests and tables).
inline constexpr DType kAllDTypes[] = {float32, float64, int32, int64, bool_};

/// The numpy-style name: "float32", "int64", "bool".
const char* dtype_name(DType dtype);
/// The short name used in IR text: "f32", "i64", "bool".
const char* dtype_short_name(DType dtype);
/// Bytes per element.
int dtype_size(DType dtype);

inline bool is_floating(DType dtype) { return dtype == float32 || dtype == float64; }
inline bool is_integer(DType dtype) { return dtype == int32 || dtype == int64; }

/// The dtype of C++ element type T (float, double, int32_t, int64_t, bool).
template <class T>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, float>)
    return float32;
  else if constexpr (std::is_same_v<T, double>)
    return float64;
  else if constexpr (std::is_same_v<T, int32_t>)
    return int32;
  else if constexpr (std::is_same_v<T, int64_t>)
    return int64;
  else if constexpr (std::is_same_v<T, bool>)
    return bool_;
  else
    static_assert(sizeof(T) == 0, "lazuli tensors hold float, double, int32_t, int64_t or bool");
}

/// Number of elements of a shape (1 for a 0-d shape).
int64_t shape_size(const Shape& shape);
/// "(3,4)"; "()" for a 0-d shape.
std::string shape_string(const Shape& shape);

}  // namespace lz
