#include <sstream>

#include "lazuli/dtype.h"

namespace lz {

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::Float32: return "float32";
    case DType::Float64: return "float64";
    case DType::Int32: return "int32";
    case DType::Int64: return "int64";
    case DType::Bool: return "bool";
  }
  return "?";
}

const char* dtype_short_name(DType dtype) {
  switch (dtype) {
    case DType::Float32: return "f32";
    case DType::Float64: return "f64";
    case DType::Int32: return "i32";
    case DType::Int64: return "i64";
    case DType::Bool: return "bool";
  }
  return "?";
}

int dtype_size(DType dtype) {
  switch (dtype) {
    case DType::Float32: return 4;
    case DType::Float64: return 8;
    case DType::Int32: return 4;
    case DType::Int64: return 8;
    case DType::Bool: return 1;
  }
  return 0;
}

int64_t shape_size(const Shape& shape) {
  // Unsigned, so that an unchecked shape cannot cause undefined behaviour; every recorded shape
  // has been checked not to overflow (ir::check_element_count).
  uint64_t size = 1;
  for (int64_t dim : shape) {
    if (dim == 0) return 0;
    size *= static_cast<uint64_t>(dim);
  }
  return static_cast<int64_t>(size);
}

std::string shape_string(const Shape& shape) {
  std::ostringstream out;
  out << '(';
  for (size_t i = 0; i < shape.size(); ++i) out << (i ? "," : "") << shape[i];
  out << ')';
  return out.str();
}

}  // namespace lz
