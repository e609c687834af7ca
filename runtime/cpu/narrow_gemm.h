// Float32 matrix products with few columns (N <= 32: a classifier's logits over a large batch)
// by a kernel of lazuli's own.
//
// Why: the libraries block for wide products. On (131072,128) x (128,16) on 2 threads, oneDNN
// ran at 80 GFLOP/s, libxsmm at 78 and OpenBLAS at 68 (a program outside the repository), a
// third of the processor's peak, where this kernel keeps eight rows' sums in registers and
// reads b's rows from the first-level cache.
#pragma once

#include <cstdint>

#include "runtime/cpu/gemm_operand.h"

namespace lz::runtime {

/// Whether narrow_sgemm computes an [m, k] @ [k, n] product: n at most 32, neither operand
/// stored transposed, b padded to whole vectors within 1 MiB (a copy each thread keeps; a longer
/// b is a dot product, BLAS's), on an x86-64 processor with AVX-512, or AVX2 and FMA.
bool narrow_gemm_takes(GemmOperand<float> a, GemmOperand<float> b, int64_t k, int64_t n);

/// out [m, n] (rows `out_leading` apart) = a [m, k] @ b [k, n] on the calling thread, each
/// element summed in order of k, by the kernel for the processor's widest vectors. Only where
/// narrow_gemm_takes.
void narrow_sgemm(GemmOperand<float> a, GemmOperand<float> b, float* out, int64_t out_leading,
                  int64_t m, int64_t k, int64_t n);

/// The instruction sets narrow_sgemm has a kernel for.
enum class NarrowGemmIsa { Avx512, Avx2 };

/// Whether this processor runs `isa`'s kernel.
bool narrow_gemm_runs(NarrowGemmIsa isa);

/// narrow_sgemm by `isa`'s kernel, where narrow_gemm_runs(isa): tests run each one the processor
/// has, whichever narrow_sgemm picks.
void narrow_sgemm_with(NarrowGemmIsa isa, GemmOperand<float> a, GemmOperand<float> b, float* out,
                       int64_t out_leading, int64_t m, int64_t k, int64_t n);

}  // namespace lz::runtime
