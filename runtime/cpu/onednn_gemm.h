// Large float32 matrix products through oneDNN's matmul primitive, one single-threaded call per
// block of the product (runtime/cpu/blas_matmul.cpp splits a product across lazuli's thread pool).
//
// Why oneDNN beside OpenBLAS: measured on the fusion and training suites' products (2 threads,
// AVX-512; `lazuli-bench --suite gemm` against a build with LAZULI_WITH_ONEDNN=OFF), oneDNN's
// JIT-generated kernels run a (131072,128)x(128,128) product about 1.3x as fast as OpenBLAS, the
// narrow (131072,128)x(128,16) 2.2x (lazuli's own kernel now takes those, narrow_gemm.h), and
// the training suite's (512,1024)x(1024,1024) products about 1.2x. On small products (the digits
// step's 64x64 matrices) each oneDNN call costs tens of microseconds more than OpenBLAS's whole
// product, so those and float64 stay with OpenBLAS.
//
// Threads: the primitives are created and run with OpenMP's thread count at 1 on the calling
// thread, so oneDNN's own OpenMP pool never starts: no third pool spins beside lazuli's.
#pragma once

#include <cstdint>

#include "runtime/cpu/gemm_operand.h"

namespace lz::runtime {

/// Has oneDNN make, on the calling thread and once, the static objects that hold the code of its
/// kernels, by running a small product each way b is read: with oneDNN 2.6 on AVX2 no later
/// primitive or run made another. exit() destroys static objects newest first, so the drain of
/// queued work at exit is registered again after them (reregister_exit_drain): a product still
/// running at exit would otherwise jump into unmapped code. A launch calls it, through
/// load_matmul_libraries, before its work is queued; onednn_sgemm registers the drain again after
/// each primitive's first run, for objects a run made that these did not.
void load_onednn();

/// Whether oneDNN should compute an [m, k] @ [k, n] float32 product: one of at least 2^22
/// multiply-adds (about 40 us of work, so a call's own cost stays a few percent) with N of at
/// least 16 (oneDNN's single-threaded kernels lose to OpenBLAS's on N = 10), in a lazuli built
/// with oneDNN (LAZULI_WITH_ONEDNN).
bool onednn_takes(int64_t m, int64_t k, int64_t n);

/// A number for a product whose blocks go to onednn_sgemm, never given before and never 0.
uint64_t new_onednn_product();

/// out [m, n] (rows `out_leading` apart) = a [m, k] @ b [k, n] on the calling thread, a block of
/// `product`. A product numbered by new_onednn_product() has b packed into oneDNN's own layout by
/// each thread at its first block, and kept for its others, so b must not change between them:
/// worth it where a thread multiplies many rows by one b (on 2 threads, (131072,128) x
/// (128,128) took 28.0 ms against 31.7 with b as stored, which oneDNN's kernels pack again at
/// every call). Product 0 reads b as stored. Returns false, doing nothing, when oneDNN has no
/// kernel for this layout, or lazuli was built without oneDNN. Threads may run it at once, on the
/// same layout too.
bool onednn_sgemm(uint64_t product, GemmOperand<float> a, GemmOperand<float> b, float* out,
                  int64_t out_leading, int64_t m, int64_t k, int64_t n);

}  // namespace lz::runtime
