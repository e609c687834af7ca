// Matrix products of float32 and float64 tensors through OpenBLAS's gemm, oneDNN's matmul for
// large float32 products (runtime/cpu/onednn_gemm.h says which and why), or lazuli's own kernel for
// float32 products of at most 32 columns (runtime/cpu/narrow_gemm.h).
//
// Why BLAS: a matmul is the one op whose speed depends on blocking for the caches and registers
// (packing panels of both operands, a micro-kernel per instruction set) rather than on fusion.
// OpenBLAS has tuned that for every x86 and ARM core, and the JIT does not compile matmuls (fusion
// keeps each one as a kernel of its own for an external call). Integer dtypes have no BLAS routine
// and stay with the caller.
//
// Threads: a product of 2^20 multiply-adds or more is split into a block of rows (of columns when
// `a` is stored transposed) per thread of runtime::parallel_for, each one single-threaded call, so
// LZ_NUM_THREADS and set_thread_count() govern products too. OpenBLAS is kept to one thread: its
// own pool spun for about 0.1 s after each product (sched_yield), and a spinning thread on one of
// two cores made the next product's block on that core, and so the product, take twice as long
// (one product in about thirteen of the training suite's wide step).
#pragma once

#include <cstdint>
#include <functional>

#include "ir/node.h"
#include "memory/buffer.h"

namespace lz::runtime {

/// Computes `node` (a MatMul node) into `out` with BLAS when its dtype is float32 or float64;
/// returns false (doing nothing) for other dtypes, which the caller interprets. It also returns
/// false when a matrix's extent beyond the first of a product exceeds what a BLAS int holds
/// (2^31 - 1); M of any size is split when `a` is not transposed. `a` and `b` hold the operands,
/// or, where `a_transposed` or `b_transposed`, their matrices transposed (plan::matmul_operand).
///
/// The values are the reference interpreter's up to rounding: BLAS accumulates in the dtype itself
/// and in its own order (the interpreter sums in double, in order of k), so an element may differ
/// by the rounding error of a K-term sum in that dtype.
bool blas_matmul(const ir::Node& node, const memory::Buffer& a, bool a_transposed,
                 const memory::Buffer& b, bool b_transposed, memory::Buffer& out);

/// Makes, on the calling thread, the static objects of the libraries that will compute `node` (a
/// MatMul node), where that is not done yet: a launch calls it before its work is queued
/// (runtime/cpu/onednn_gemm.h, load_onednn).
void load_matmul_libraries(const ir::Node& node);

/// Work on a block of a product's rows right after they are computed, on the thread that
/// computed them, while they are in cache: rows [first, first + count) of the product (its
/// matrices' rows counted one after another), stored contiguous at `rows`, each N elements of
/// the product's dtype.
using RowEpilogue = std::function<void(const void* rows, int64_t first, int64_t count)>;

/// The bytes of rows an epilogue receives at a time, at most (a block has 16 rows at least): half
/// the core's second-level cache (256 KiB where the system does not say), so that they are still
/// there when it reads them.
int64_t epilogue_block_bytes();

/// blas_matmul computing the product in blocks of rows of up to epilogue_block_bytes(), split by
/// rows across threads, each passed to `epilogue` as soon as it is computed: into `out`, or, where
/// `out` is null, into memory of the thread's own that the next block reuses, so the product never
/// reaches a buffer. Also returns false, doing nothing, for an empty product or an empty sum
/// (K = 0): the epilogue would see no row, though its per-row outputs may need writing.
bool blas_matmul(const ir::Node& node, const memory::Buffer& a, bool a_transposed,
                 const memory::Buffer& b, bool b_transposed, memory::Buffer* out,
                 const RowEpilogue& epilogue);

}  // namespace lz::runtime
