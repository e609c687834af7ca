// How a matrix product's kernels read an operand (runtime/cpu/blas_matmul.cpp, onednn_gemm.h,
// narrow_gemm.h).
#pragma once

#include <cstdint>

namespace lz::runtime {

/// One operand of a product as gemm reads it: row-major matrices, or their transposes, with
/// `leading` elements between the starts of consecutive stored rows.
template <class T>
struct GemmOperand {
  const T* data;
  bool transposed;
  int64_t leading;
};

}  // namespace lz::runtime
