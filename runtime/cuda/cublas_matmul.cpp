#include "runtime/cuda/cublas_matmul.h"

#include <array>
#include <limits>
#include <mutex>
#include <type_traits>
#include <vector>

#include "ir/matmul_shape.h"
#include "ir/printer.h"
#include "lazuli/error.h"
#include "reference/interpreter_internal.h"
#include "support/shared_library.h"

namespace lz::runtime::cuda {
namespace {

using CublasHandle = struct cublasContext*;
using CublasStatus = int;        // CUBLAS_STATUS_SUCCESS is 0
constexpr int kNoTranspose = 0;  // CUBLAS_OP_N
constexpr int kTranspose = 1;    // CUBLAS_OP_T

/// Entry points of libcublas, by their versioned symbol names (cublas_api.h).
struct CublasApi {
  CublasStatus (*create)(CublasHandle* handle);
  CublasStatus (*set_stream)(CublasHandle handle, CUstream stream);
  CublasStatus (*sgemm)(CublasHandle handle, int transa, int transb, int m, int n, int k,
                        const float* alpha, const float* a, int lda, const float* b, int ldb,
                        const float* beta, float* c, int ldc);
  CublasStatus (*dgemm)(CublasHandle handle, int transa, int transb, int m, int n, int k,
                        const double* alpha, const double* a, int lda, const double* b, int ldb,
                        const double* beta, double* c, int ldc);
  const char* (*status_string)(CublasStatus status);
};

/// cuBLAS, loaded at the first matmul on a GPU; null (with why) when it cannot be.
const CublasApi* cublas(std::string* why) {
  static std::string failure;
  static const CublasApi* const loaded = []() -> const CublasApi* {
    void* library = support::load_library({"libcublas.so.13", "libcublas.so.12", "libcublas.so",
                                           "/usr/local/cuda/lib64/libcublas.so.13"},
                                          failure);
    if (library == nullptr) return nullptr;
    const auto resolve = [&](const char* symbol, auto& entry) {
      return support::resolve_symbol(library, "libcublas", symbol, entry, failure);
    };
    auto* api = new CublasApi();
    if (!resolve("cublasCreate_v2", api->create) ||
        !resolve("cublasSetStream_v2", api->set_stream) || !resolve("cublasSgemm_v2", api->sgemm) ||
        !resolve("cublasDgemm_v2", api->dgemm) ||
        !resolve("cublasGetStatusString", api->status_string)) {
      delete api;
      return nullptr;
    }
    return api;
  }();
  if (loaded == nullptr && why != nullptr) *why = failure;
  return loaded;
}

void check_cublas(const CublasApi& api, CublasStatus status, const ir::Node& node,
                  const char* call) {
  if (status == 0) return;
  throw ir::recorded_error(node, std::string(call) + " failed: " + api.status_string(status));
}

/// One cuBLAS handle per device stream, created in the device's context and bound to the
/// stream once: a handle's workspace serves one stream, so products queued on two streams never
/// share it. Used under its lock (a handle is not for two threads at once).
struct StreamHandle {
  std::mutex mutex;
  CublasHandle handle = nullptr;
};

StreamHandle& handle_of(const CublasApi& api, CudaDevice& device, int stream,
                        const ir::Node& node) {
  static std::array<StreamHandle, kMaxCudaDevices * kStreamsPerDevice> handles;
  StreamHandle& entry =
      handles.at(static_cast<size_t>(device.ordinal() * kStreamsPerDevice + stream));
  std::lock_guard lock(entry.mutex);
  if (entry.handle == nullptr) {
    const CUstream cuda_stream = device.stream(stream);  // makes the context current
    CublasHandle created = nullptr;
    check_cublas(api, api.create(&created), node, "cublasCreate");
    check_cublas(api, api.set_stream(created, cuda_stream), node, "cublasSetStream");
    entry.handle = created;
  }
  return entry;
}

/// C [m, n] = A [m, k] @ B [k, n], row-major: cuBLAS is column-major, so it computes
/// C^T = B^T A^T, which in column-major terms is B (n x k, leading dimension n) times A (k x m,
/// leading dimension k). A row-major matrix stored transposed ([n, k] for B) is, column-major,
/// the matrix itself (k x n, leading dimension k), which cuBLAS reads transposed.
template <class T>
void gemm(const CublasApi& api, CublasHandle handle, const ir::Node& node, CublasOperand a,
          CublasOperand b, uint64_t c, int m, int k, int n) {
  const T one = 1;
  const T zero = 0;
  const auto* a_data = reinterpret_cast<const T*>(a.address);
  const auto* b_data = reinterpret_cast<const T*>(b.address);
  auto* c_data = reinterpret_cast<T*>(c);
  const int b_flag = b.transposed ? kTranspose : kNoTranspose;
  const int a_flag = a.transposed ? kTranspose : kNoTranspose;
  const int ldb = b.transposed ? k : n;
  const int lda = a.transposed ? m : k;
  if constexpr (std::is_same_v<T, float>) {
    check_cublas(api,
                 api.sgemm(handle, b_flag, a_flag, n, m, k, &one, b_data, ldb, a_data, lda, &zero,
                           c_data, n),
                 node, "cublasSgemm");
  } else {
    check_cublas(api,
                 api.dgemm(handle, b_flag, a_flag, n, m, k, &one, b_data, ldb, a_data, lda, &zero,
                           c_data, n),
                 node, "cublasDgemm");
  }
}

template <class T>
void multiply(const CublasApi& api, CublasHandle handle, const ir::Node& node, CublasOperand a,
              CublasOperand b, uint64_t out) {
  const auto [m, k, n, batch] = ir::MatmulShape::of(node);
  const auto element = static_cast<int64_t>(sizeof(T));
  const std::vector<int64_t> a_strides =
      reference::detail::matmul_batch_strides(node.inputs[0]->shape, batch);
  const std::vector<int64_t> b_strides =
      reference::detail::matmul_batch_strides(node.inputs[1]->shape, batch);
  reference::detail::walk_strided<2>(
      batch, {a_strides.data(), b_strides.data()}, {0, 0},
      [&](int64_t batch_index, const std::array<int64_t, 2>& offset) {
        const auto at = [&](CublasOperand operand, int64_t elements) {
          return CublasOperand{operand.address + static_cast<uint64_t>(elements * element),
                               operand.transposed};
        };
        gemm<T>(api, handle, node, at(a, offset[0]), at(b, offset[1]),
                out + static_cast<uint64_t>(batch_index * m * n * element), static_cast<int>(m),
                static_cast<int>(k), static_cast<int>(n));
      });
}

}  // namespace

bool cublas_available(std::string* why) { return cublas(why) != nullptr; }

void cublas_matmul(CudaDevice& device, int stream, const ir::Node& node, CublasOperand a,
                   CublasOperand b, uint64_t out) {
  if (node.dtype != float32 && node.dtype != float64) {
    throw ir::recorded_error(
        node, "a " + std::string(dtype_name(node.dtype)) +
                  " matmul cannot run on a CUDA device (cuBLAS multiplies float32 and float64); "
                  "compute it on lz::Device::cpu() or astype(float32) first");
  }
  std::string why;
  const CublasApi* api = cublas(&why);
  if (api == nullptr) throw ir::recorded_error(node, "cuBLAS is not available: " + why);
  const auto [m, k, n, batch] = ir::MatmulShape::of(node);
  constexpr int64_t kMax = std::numeric_limits<int>::max();
  if (m > kMax || k > kMax || n > kMax) {
    throw ir::recorded_error(node, "a dimension of " + ir::type_text(node.dtype, node.shape) +
                                       " exceeds cuBLAS's int; split the product");
  }
  if (node.size() == 0) return;
  const CUstream cuda_stream = device.stream(stream);  // makes the context current
  if (k == 0) {  // an empty sum is 0; cuBLAS rejects a leading dimension of 0
    check(device.driver(),
          device.driver().api.memset_d8_async(
              out, 0, static_cast<size_t>(node.size()) * dtype_size(node.dtype), cuda_stream),
          "matmul", "cuMemsetD8Async");
    return;
  }
  StreamHandle& handle = handle_of(*api, device, stream, node);
  std::lock_guard lock(handle.mutex);
  device.make_current();
  if (node.dtype == float32) {
    multiply<float>(*api, handle.handle, node, a, b, out);
  } else {
    multiply<double>(*api, handle.handle, node, a, b, out);
  }
}

}  // namespace lz::runtime::cuda
