#include "runtime/blas_matmul.h"

#include <cblas.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <limits>
#include <vector>

#include "reference/interpreter_internal.h"
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

void gemm(const float* a, const float* b, float* out, int m, int k, int n) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, k, b, n, 0.0f, out, n);
}

void gemm(const double* a, const double* b, double* out, int m, int k, int n) {
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0, a, k, b, n, 0.0, out, n);
}

/// out [m, n] = a [m, k] @ b [k, n], all contiguous, with 0 < k, n <= kMaxBlasDimension; rows
/// beyond what an int counts go to further calls.
template <class T>
void multiply_matrices(const T* a, const T* b, T* out, int64_t m, int64_t k, int64_t n) {
  for (int64_t row = 0; row < m; row += kMaxBlasDimension) {
    const int64_t rows = std::min(m - row, kMaxBlasDimension);
    gemm(a + row * k, b, out + row * n, static_cast<int>(rows), static_cast<int>(k),
         static_cast<int>(n));
  }
}

template <class T>
void multiply(const ir::Node& node, const memory::Buffer& a, const memory::Buffer& b,
              memory::Buffer& out) {
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
  // One b for every batch and a not broadcast: a's matrices lie one after another exactly like
  // the output's, so [batch * m, k] @ [k, n] is the whole product in one call.
  if (b_batch_count == 1 && a_batch_count == batch_count) {
    multiply_matrices(a_data, b_data, result, batch_count * m, k, n);
    return;
  }
  const std::vector<int64_t> a_strides = reference::detail::matmul_batch_strides(a_shape, batch);
  const std::vector<int64_t> b_strides = reference::detail::matmul_batch_strides(b_shape, batch);
  reference::detail::walk_strided<2>(
      batch, {a_strides.data(), b_strides.data()}, {0, 0},
      [&](int64_t batch_index, const std::array<int64_t, 2>& offset) {
        multiply_matrices(a_data + offset[0], b_data + offset[1], result + batch_index * m * n, m,
                          k, n);
      });
}

}  // namespace

bool blas_matmul(const ir::Node& node, const memory::Buffer& a, const memory::Buffer& b,
                 memory::Buffer& out) {
  if (node.dtype != float32 && node.dtype != float64) return false;
  const Shape& a_shape = node.inputs[0]->shape;
  const Shape& b_shape = node.inputs[1]->shape;
  if (a_shape[a_shape.size() - 1] > kMaxBlasDimension ||
      b_shape[b_shape.size() - 1] > kMaxBlasDimension) {
    return false;
  }
  match_blas_thread_count();
  if (node.dtype == float32) {
    multiply<float>(node, a, b, out);
  } else {
    multiply<double>(node, a, b, out);
  }
  return true;
}

}  // namespace lz::runtime
