#include "runtime/cpu/narrow_gemm.h"

#include <algorithm>
#include <vector>

#if defined(__x86_64__) && defined(__GNUC__)
#define LAZULI_NARROW_GEMM_X86 1
#endif

namespace lz::runtime {
namespace {

constexpr int64_t kMaxColumns = 32;
// b padded to whole vectors, which each thread keeps until its next product, at most: 16 times
// b for a single column, so a dot product of 2^23 elements would have kept 512 MiB.
constexpr int64_t kMaxPaddedBBytes = int64_t{1} << 20;

/// out [m, n] = a [m, k] @ panel, which holds b's k rows, each padded with zeros to a whole
/// number of the kernel's vectors.
using Multiply = void (*)(const float* a, int64_t a_leading, const float* panel, float* out,
                          int64_t out_leading, int64_t m, int64_t k, int64_t n);

/// A kernel for one instruction set.
struct IsaKernel {
  Multiply multiply = nullptr;  // null where the processor lacks the instruction set
  int64_t lanes = 1;            // float32 per vector: b's rows are padded to whole vectors
};

#ifdef LAZULI_NARROW_GEMM_X86

// A register of float32: 16 with AVX-512, 8 with AVX2. Written with GCC's vector extensions, the
// kernel below compiles for whichever instruction set the function it is inlined into targets.
// Unaligned (rows lie anywhere) and may alias float, so it is read and written through pointers
// into rows; each `sum += x * row` contracts into a fused multiply-add (GCC's default in C++).
using Vector16 = float __attribute__((vector_size(64), aligned(4), may_alias));
using Vector8 = float __attribute__((vector_size(32), aligned(4), may_alias));

/// kRows rows of out = the same rows of a @ panel, which holds b's k rows, each padded with zeros
/// to kVectors vectors. The sums stay in registers (kRows x kVectors of them, beside b's
/// row and a's element), and the rows of the block after next are prefetched: the rows read
/// together are as many streams, which the processor's prefetchers did not follow. With `a` from
/// memory, (65536,128) x (128,16) ran at 40 GFLOP/s on one thread without it, against 111 with `a`
/// in cache; 53 prefetching one block ahead, 46-59 two blocks ahead.
template <class Vector, int kRows, int kVectors>
[[gnu::always_inline]] inline void multiply_rows(const float* a, int64_t a_leading,
                                                 const float* panel, float* out,
                                                 int64_t out_leading, int64_t k, int64_t n) {
  constexpr int kLanes = sizeof(Vector) / sizeof(float);
  Vector sums[kRows][kVectors] = {};
  for (int64_t p = 0; p < k; ++p) {
    if (p % 16 == 0) {  // a cache line of a's rows
#pragma GCC unroll 16
      for (int i = 0; i < kRows; ++i) __builtin_prefetch(a + (2 * kRows + i) * a_leading + p);
    }
    const Vector* row = reinterpret_cast<const Vector*>(panel + p * kVectors * kLanes);
#pragma GCC unroll 16
    for (int i = 0; i < kRows; ++i) {
      const float x = a[i * a_leading + p];
#pragma GCC unroll 4
      for (int v = 0; v < kVectors; ++v) sums[i][v] += x * row[v];
    }
  }
#pragma GCC unroll 16
  for (int i = 0; i < kRows; ++i) {
#pragma GCC unroll 4
    for (int v = 0; v < kVectors; ++v) {
      float* const to = out + i * out_leading + v * kLanes;
      const int64_t columns = std::min<int64_t>(kLanes, n - v * kLanes);
      if (columns == kLanes) {
        *reinterpret_cast<Vector*>(to) = sums[i][v];
      } else {
        for (int64_t j = 0; j < columns; ++j) to[j] = sums[i][v][j];
      }
    }
  }
}

/// out = a @ panel, kRows rows at a time, then the rest one by one.
template <class Vector, int kRows, int kVectors>
[[gnu::always_inline]] inline void multiply_all_rows(const float* a, int64_t a_leading,
                                                     const float* panel, float* out,
                                                     int64_t out_leading, int64_t m, int64_t k,
                                                     int64_t n) {
  int64_t row = 0;
  for (; row + kRows <= m; row += kRows) {
    multiply_rows<Vector, kRows, kVectors>(a + row * a_leading, a_leading, panel,
                                           out + row * out_leading, out_leading, k, n);
  }
  for (; row < m; ++row) {
    multiply_rows<Vector, 1, kVectors>(a + row * a_leading, a_leading, panel,
                                       out + row * out_leading, out_leading, k, n);
  }
}

// As many rows at a time as keep every sum in a register: 32 registers of 16 float32 with
// AVX-512, 16 of 8 with AVX2.
[[gnu::target("arch=x86-64-v4")]] void multiply_avx512(const float* a, int64_t a_leading,
                                                       const float* panel, float* out,
                                                       int64_t out_leading, int64_t m, int64_t k,
                                                       int64_t n) {
  if (n <= 16) {
    multiply_all_rows<Vector16, 8, 1>(a, a_leading, panel, out, out_leading, m, k, n);
  } else {
    multiply_all_rows<Vector16, 6, 2>(a, a_leading, panel, out, out_leading, m, k, n);
  }
}

[[gnu::target("arch=x86-64-v3")]] void multiply_avx2(const float* a, int64_t a_leading,
                                                     const float* panel, float* out,
                                                     int64_t out_leading, int64_t m, int64_t k,
                                                     int64_t n) {
  if (n <= 8) {
    multiply_all_rows<Vector8, 8, 1>(a, a_leading, panel, out, out_leading, m, k, n);
  } else if (n <= 16) {
    multiply_all_rows<Vector8, 4, 2>(a, a_leading, panel, out, out_leading, m, k, n);
  } else if (n <= 24) {
    multiply_all_rows<Vector8, 3, 3>(a, a_leading, panel, out, out_leading, m, k, n);
  } else {
    multiply_all_rows<Vector8, 2, 4>(a, a_leading, panel, out, out_leading, m, k, n);
  }
}

/// The kernel for `isa`; one without a function where the processor lacks it.
IsaKernel kernel_for(NarrowGemmIsa isa) {
  switch (isa) {
    case NarrowGemmIsa::Avx512:
      if (__builtin_cpu_supports("x86-64-v4")) return {multiply_avx512, 16};
      break;
    case NarrowGemmIsa::Avx2:
      if (__builtin_cpu_supports("x86-64-v3")) return {multiply_avx2, 8};
      break;
  }
  return {};
}

#else

IsaKernel kernel_for(NarrowGemmIsa) { return {}; }

#endif

/// The kernel of the widest vectors the processor has; one without a function where it has
/// neither.
IsaKernel host_kernel() {
  static const IsaKernel kernel = kernel_for(NarrowGemmIsa::Avx512).multiply != nullptr
                                      ? kernel_for(NarrowGemmIsa::Avx512)
                                      : kernel_for(NarrowGemmIsa::Avx2);
  return kernel;
}

void multiply_with(const IsaKernel& kernel, GemmOperand<float> a, GemmOperand<float> b, float* out,
                   int64_t out_leading, int64_t m, int64_t k, int64_t n) {
  const int64_t padded = (n + kernel.lanes - 1) / kernel.lanes * kernel.lanes;
  const float* panel = b.data;
  if (n != padded || b.leading != n) {
    thread_local std::vector<float> padded_rows;
    padded_rows.assign(k * padded, 0.0f);
    for (int64_t p = 0; p < k; ++p) {
      std::copy_n(b.data + p * b.leading, n, padded_rows.data() + p * padded);
    }
    panel = padded_rows.data();
  }
  kernel.multiply(a.data, a.leading, panel, out, out_leading, m, k, n);
}

}  // namespace

bool narrow_gemm_takes(GemmOperand<float> a, GemmOperand<float> b, int64_t k, int64_t n) {
  const IsaKernel kernel = host_kernel();
  const int64_t padded = (n + kernel.lanes - 1) / kernel.lanes * kernel.lanes;
  return n <= kMaxColumns && !a.transposed && !b.transposed && kernel.multiply != nullptr &&
         k * padded * static_cast<int64_t>(sizeof(float)) <= kMaxPaddedBBytes;
}

void narrow_sgemm(GemmOperand<float> a, GemmOperand<float> b, float* out, int64_t out_leading,
                  int64_t m, int64_t k, int64_t n) {
  multiply_with(host_kernel(), a, b, out, out_leading, m, k, n);
}

bool narrow_gemm_runs(NarrowGemmIsa isa) { return kernel_for(isa).multiply != nullptr; }

void narrow_sgemm_with(NarrowGemmIsa isa, GemmOperand<float> a, GemmOperand<float> b, float* out,
                       int64_t out_leading, int64_t m, int64_t k, int64_t n) {
  multiply_with(kernel_for(isa), a, b, out, out_leading, m, k, n);
}

}  // namespace lz::runtime
