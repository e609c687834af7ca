// The fake libcublas.so.13: the cuBLAS entry points lazuli resolves
// (runtime/cuda/cublas_matmul.cpp), with cublas_api.h's signatures and cuBLAS's semantics:
// column-major operands, op(A) and op(B) by transa and transb, leading dimensions, alpha and beta
// read from host memory at the call, the product queued on the handle's stream. A plain triple
// loop computes it when the stream reaches it.
#include <algorithm>
#include <cstdint>
#include <mutex>
#include <new>
#include <string>
#include <unordered_set>

#include "tests/cuda_emulation/driver.h"
#include "tests/cuda_emulation/stream.h"

namespace lz::cuda_emulation {
namespace {

using CublasStatus = int;  // cublas_api.h's cublasStatus_t, an int
constexpr CublasStatus kCublasSuccess = 0;
constexpr CublasStatus kCublasNotInitialized = 1;
constexpr CublasStatus kCublasAllocFailed = 3;
constexpr CublasStatus kCublasInvalidValue = 7;

struct Handle {
  Context* context = nullptr;
  CUstream stream = nullptr;  // null: the context's default stream
};

struct Handles {
  std::mutex mutex;
  std::unordered_set<Handle*> live;
};

Handles& handles() {
  static Handles* const registry = new Handles();
  return *registry;
}

Handle* find_handle(void* pointer) {
  std::lock_guard lock(handles().mutex);
  auto* handle = static_cast<Handle*>(pointer);
  return handles().live.contains(handle) ? handle : nullptr;
}

/// cublasOperation_t: CUBLAS_OP_N, _T, _C (the conjugate of a real matrix is its transpose).
bool transposes(int operation) { return operation != 0; }

/// The elements spanned by a column-major `rows` x `columns` matrix of leading dimension `ld`.
size_t span(int rows, int columns, int ld) {
  if (rows == 0 || columns == 0) return 0;
  return static_cast<size_t>(columns - 1) * static_cast<size_t>(ld) + static_cast<size_t>(rows);
}

/// C = alpha op(A) op(B) + beta C, queued on the handle's stream.
template <class T>
CublasStatus gemm(void* handle_pointer, int transa, int transb, int m, int n, int k,
                  const T* alpha_pointer, const T* a, int lda, const T* b, int ldb,
                  const T* beta_pointer, T* c, int ldc, const char* call) {
  Handle* handle = find_handle(handle_pointer);
  if (handle == nullptr) return kCublasNotInitialized;
  const int a_rows = transposes(transa) ? k : m;
  const int b_rows = transposes(transb) ? n : k;
  if (transa < 0 || transa > 2 || transb < 0 || transb > 2 || m < 0 || n < 0 || k < 0 ||
      lda < std::max(1, a_rows) || ldb < std::max(1, b_rows) || ldc < std::max(1, m) ||
      alpha_pointer == nullptr || beta_pointer == nullptr) {
    return kCublasInvalidValue;
  }
  if (m == 0 || n == 0) return kCublasSuccess;
  Stream* stream = find_stream(handle->stream, *handle->context);
  if (stream == nullptr) return kCublasInvalidValue;
  const T alpha = *alpha_pointer;  // host pointer mode: read now
  const T beta = *beta_pointer;
  Context& context = *handle->context;
  const size_t a_span = alpha == T{0} ? 0 : span(a_rows, transposes(transa) ? m : k, lda);
  const size_t b_span = alpha == T{0} ? 0 : span(b_rows, transposes(transb) ? k : n, ldb);
  const size_t c_span = span(m, n, ldc);
  const std::string what = call;
  stream->enqueue([=, &context] {
    if (context.fault.load() != kSuccess) return;
    // Each operand within one allocation of the handle's device (no peer access is emulated).
    const auto on_device = [&](const T* pointer, size_t elements) {
      return elements == 0 || device_holding(reinterpret_cast<CUdeviceptr>(pointer),
                                             elements * sizeof(T)) == context.device;
    };
    if (!on_device(a, a_span) || !on_device(b, b_span) || !on_device(c, c_span)) {
      fault(context, kErrorIllegalAddress,
            what + " (m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" +
                std::to_string(k) + " lda=" + std::to_string(lda) + " ldb=" + std::to_string(ldb) +
                " ldc=" + std::to_string(ldc) + ") reads or writes outside the device's memory");
      return;
    }
    const auto element_a = [&](int i, int l) {
      return transposes(transa) ? a[l + static_cast<size_t>(i) * lda]
                                : a[i + static_cast<size_t>(l) * lda];
    };
    const auto element_b = [&](int l, int j) {
      return transposes(transb) ? b[j + static_cast<size_t>(l) * ldb]
                                : b[l + static_cast<size_t>(j) * ldb];
    };
    for (int j = 0; j < n; ++j) {
      for (int i = 0; i < m; ++i) {
        T sum = 0;
        if (alpha != T{0}) {
          for (int l = 0; l < k; ++l) sum += element_a(i, l) * element_b(l, j);
        }
        T& out = c[i + static_cast<size_t>(j) * ldc];
        // beta == 0: C is not read (it may hold NaNs), as BLAS specifies.
        out = beta == T{0} ? alpha * sum : alpha * sum + beta * out;
      }
    }
  });
  return kCublasSuccess;
}

}  // namespace
}  // namespace lz::cuda_emulation

using namespace lz::cuda_emulation;  // NOLINT: the entry points below are C functions

using CublasHandle = void*;  // cublasHandle_t, a pointer to an opaque struct

LZ_EMULATION_EXPORT CublasStatus cublasCreate_v2(CublasHandle* created) {
  if (created == nullptr) return kCublasInvalidValue;
  Context* context = current_context();
  if (context == nullptr) {
    report_misuse("cublasCreate: no CUDA context is current");
    return kCublasNotInitialized;
  }
  auto* handle = new (std::nothrow) Handle{context, nullptr};
  if (handle == nullptr) return kCublasAllocFailed;
  std::lock_guard lock(handles().mutex);
  handles().live.insert(handle);
  *created = handle;
  return kCublasSuccess;
}

LZ_EMULATION_EXPORT CublasStatus cublasDestroy_v2(CublasHandle pointer) {
  {
    std::lock_guard lock(handles().mutex);
    if (handles().live.erase(static_cast<Handle*>(pointer)) == 0) return kCublasNotInitialized;
  }
  delete static_cast<Handle*>(pointer);
  return kCublasSuccess;
}

LZ_EMULATION_EXPORT CublasStatus cublasSetStream_v2(CublasHandle pointer, CUstream stream) {
  Handle* handle = find_handle(pointer);
  if (handle == nullptr) return kCublasNotInitialized;
  const Stream* found = find_stream(stream, *handle->context);
  if (found == nullptr || &found->context() != handle->context) {
    report_misuse("cublasSetStream: the stream is not one of the handle's device");
    return kCublasInvalidValue;
  }
  handle->stream = stream;
  return kCublasSuccess;
}

LZ_EMULATION_EXPORT CublasStatus cublasGetStream_v2(CublasHandle pointer, CUstream* stream) {
  const Handle* handle = find_handle(pointer);
  if (handle == nullptr) return kCublasNotInitialized;
  if (stream == nullptr) return kCublasInvalidValue;
  *stream = handle->stream;
  return kCublasSuccess;
}

LZ_EMULATION_EXPORT CublasStatus cublasSgemm_v2(CublasHandle handle, int transa, int transb, int m,
                                                int n, int k, const float* alpha, const float* a,
                                                int lda, const float* b, int ldb, const float* beta,
                                                float* c, int ldc) {
  return gemm(handle, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, "cublasSgemm");
}

LZ_EMULATION_EXPORT CublasStatus cublasDgemm_v2(CublasHandle handle, int transa, int transb, int m,
                                                int n, int k, const double* alpha, const double* a,
                                                int lda, const double* b, int ldb,
                                                const double* beta, double* c, int ldc) {
  return gemm(handle, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, "cublasDgemm");
}

LZ_EMULATION_EXPORT const char* cublasGetStatusString(CublasStatus status) {
  switch (status) {
    case 0: return "CUBLAS_STATUS_SUCCESS";
    case 1: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case 3: return "CUBLAS_STATUS_ALLOC_FAILED";
    case 7: return "CUBLAS_STATUS_INVALID_VALUE";
    case 8: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case 11: return "CUBLAS_STATUS_MAPPING_ERROR";
    case 13: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case 14: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case 15: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case 16: return "CUBLAS_STATUS_LICENSE_ERROR";
    default: return "CUBLAS_STATUS_UNKNOWN";
  }
}
