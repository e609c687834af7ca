#include "runtime/blas_matmul.h"

#include <cblas.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <limits>
#include <vector>

#include "reference/interpreter_internal.h"
#include "runtime/onednn_gemm.h"
#include "runtime/thread_pool.h"

// OpenBLAS's own cblas.h declares this, but on Debian <cblas.h> is an alternative that may be
// netlib's header; the library linked is OpenBLAS either way (see the top-level CMakeLists.txt).
extern "C" void openblas_set_num_threads(int num_threads);

namespace lz::runtime {
namespace {

// cblas takes M, N, K and leading dimensions as `int` (blasint in an LP64 OpenBLAS build).
constexpr int64_t kMaxBlasDimension = std::numeric_limits<int>::max();

/// Gives OpenBLAS runtime::thread_count() threads if it was last given another count.
void match_blas_thread_count() {
  static std::atomic<int> blas_thread_count{0};
  const int wanted = thread_count();
  if (blas_thread_count.exchange(wanted, std::memory_order_relaxed) != wanted) {
    openblas_set_num_threads(wanted);
  }
}

CBLAS_TRANSPOSE transpose_flag(bool transposed) { return transposed ? CblasTrans : CblasNoTrans; }

/// out [m, n] = a [m, k] @ b [k, n], with m, k and n at most kMaxBlasDimension: oneDNN's when it
/// takes the product, else OpenBLAS's.
void gemm(GemmOperand<float> a, GemmOperand<float> b, float* out, int64_t m, int64_t k, int64_t n) {
  if (onednn_sgemm(a, b, out, m, k, n)) return;
  cblas_sgemm(CblasRowMajor, transpose_flag(a.transposed), transpose_flag(b.transposed),
              static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), 1.0f, a.data,
              static_cast<int>(a.leading), b.data, static_cast<int>(b.leading), 0.0f, out,
              static_cast<int>(n));
}

void gemm(GemmOperand<double> a, GemmOperand<double> b, double* out, int64_t m, int64_t k,
          int64_t n) {
  cblas_dgemm(CblasRowMajor, transpose_flag(a.transposed), transpose_flag(b.transposed),
              static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), 1.0, a.data,
              static_cast<int>(a.leading), b.data, static_cast<int>(b.leading), 0.0, out,
              static_cast<int>(n));
}

/// out [m, n] = a [m, k] @ b [k, n], each operand stored contiguous (as [k, m] or [n, k] when
/// transposed), with 0 < k, n <= kMaxBlasDimension and m too when a is transposed; rows beyond
/// what an int counts go to further calls.
template <class T>
void multiply_matrices(const T* a, bool a_transposed, const T* b, bool b_transposed, T* out,
                       int64_t m, int64_t k, int64_t n) {
  const GemmOperand<T> b_operand{b, b_transposed, b_transposed ? k : n};
  for (int64_t row = 0; row < m; row += kMaxBlasDimension) {
    const int64_t rows = std::min(m - row, kMaxBlasDimension);
    // Row `row` of a transposed a starts at column `row` of the [k, m] matrix stored.
    const GemmOperand<T> rows_of_a{a + (a_transposed ? row : row * k), a_transposed,
                                   a_transposed ? m : k};
    gemm(rows_of_a, b_operand, out + row * n, rows, k, n);
  }
}

template <class T>
void multiply(const ir::Node& node, const memory::Buffer& a, bool a_transposed,
              const memory::Buffer& b, bool b_transposed, memory::Buffer& out) {
  const Shape& a_shape = node.inputs[0]->shape;
  const Shape& b_shape = node.inputs[1]->shape;
  const int64_t m = a_shape[a_shape.size() - 2];
  const int64_t k = a_shape[a_shape.size() - 1];
  const int64_t n = b_shape[b_shape.size() - 1];
  T* result = out.data_as<T>();
  if (out.size() == 0) return;
  // BLAS rejects a leading dimension of 0; an empty sum is 0.
  if (k == 0) {
    std::fill_n(result, out.size(), T{0});
    return;
  }
  const T* a_data = a.data_as<T>();
  const T* b_data = b.data_as<T>();
  const Shape batch(node.shape.begin(), node.shape.end() - 2);
  const int64_t batch_count = shape_size(batch);
  const int64_t a_batch_count = shape_size(Shape(a_shape.begin(), a_shape.end() - 2));
  const int64_t b_batch_count = shape_size(Shape(b_shape.begin(), b_shape.end() - 2));
  // One b for every batch and a neither broadcast nor transposed: a's matrices lie one after
  // another exactly like the output's, so [batch * m, k] @ [k, n] is the whole product in one
  // call.
  if (b_batch_count == 1 && a_batch_count == batch_count && !a_transposed) {
    multiply_matrices(a_data, a_transposed, b_data, b_transposed, result, batch_count * m, k, n);
    return;
  }
  const std::vector<int64_t> a_strides = reference::detail::matmul_batch_strides(a_shape, batch);
  const std::vector<int64_t> b_strides = reference::detail::matmul_batch_strides(b_shape, batch);
  reference::detail::walk_strided<2>(
      batch, {a_strides.data(), b_strides.data()}, {0, 0},
      [&](int64_t batch_index, const std::array<int64_t, 2>& offset) {
        multiply_matrices(a_data + offset[0], a_transposed, b_data + offset[1], b_transposed,
                          result + batch_index * m * n, m, k, n);
      });
}

}  // namespace

bool blas_matmul(const ir::Node& node, const memory::Buffer& a, bool a_transposed,
                 const memory::Buffer& b, bool b_transposed, memory::Buffer& out) {
  if (node.dtype != float32 && node.dtype != float64) return false;
  const Shape& a_shape = node.inputs[0]->shape;
  const Shape& b_shape = node.inputs[1]->shape;
  // k and n are leading dimensions, and so is m when a is stored transposed.
  if (a_shape[a_shape.size() - 1] > kMaxBlasDimension ||
      b_shape[b_shape.size() - 1] > kMaxBlasDimension ||
      (a_transposed && a_shape[a_shape.size() - 2] > kMaxBlasDimension)) {
    return false;
  }
  match_blas_thread_count();
  if (node.dtype == float32) {
    multiply<float>(node, a, a_transposed, b, b_transposed, out);
  } else {
    multiply<double>(node, a, a_transposed, b, b_transposed, out);
  }
  return true;
}

}  // namespace lz::runtime
