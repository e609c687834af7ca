// Large float32 matrix products through oneDNN's matmul primitive, on lazuli's thread pool.
//
// Why oneDNN beside OpenBLAS: measured on the fusion and training suites' products (2 threads,
// AVX-512), oneDNN's JIT-generated kernels run a (131072,128)x(128,128) product in 24 ms against
// OpenBLAS's 31, the narrow (131072,128)x(128,16) in 6 against 12-14, and the training suite's
// (512,1024)x(1024,1024) products about 10% faster. On small products (the digits step's 64x64
// matrices) each oneDNN call costs tens of microseconds more than OpenBLAS's whole product, so
// those, float64 and narrow N stay with OpenBLAS (runtime/blas_matmul.cpp picks).
//
// Threads: each of runtime::parallel_for's threads runs a single-threaded primitive on its own
// block of the product's rows (or of its columns, when `a` is stored transposed and its rows
// would be strided). oneDNN's own OpenMP pool is never started, so no third pool spins beside
// lazuli's and OpenBLAS's, and LZ_NUM_THREADS governs these products too.
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

/// out [m, n] (rows `n` apart) = a [m, k] @ b [k, n] with oneDNN, when the product has at least
/// 2^22 multiply-adds (about 40 us of work, so a call's own cost stays a few percent) and N is at
/// least 16 (oneDNN's single-threaded kernels lose to OpenBLAS's on N = 10). Returns false, doing
/// nothing, for other products, when oneDNN cannot run this one, or when lazuli was built without
/// oneDNN (LAZULI_WITH_ONEDNN=OFF).
bool onednn_sgemm(GemmOperand<float> a, GemmOperand<float> b, float* out, int64_t m, int64_t k,
                  int64_t n);

}  // namespace lz::runtime
