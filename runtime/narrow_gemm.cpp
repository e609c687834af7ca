#include "runtime/narrow_gemm.h"

#include <algorithm>
#include <vector>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define LAZULI_NARROW_GEMM_X86 1
#endif

namespace lz::runtime {
namespace {

constexpr int64_t kMaxColumns = 32;

/// out [m, n] = a [m, k] @ panel, which holds b's k rows, each padded with zeros to a whole
/// number of the kernel's vectors.
using Multiply = void (*)(const float* a, int64_t a_leading, const float* panel, float* out,
                          int64_t out_leading, int64_t m, int64_t k, int64_t n);

struct IsaKernel {
  Multiply multiply = nullptr;  // null where the processor lacks the instruction set
  int64_t width = 1;            // float32 per vector
};

#ifdef LAZULI_NARROW_GEMM_X86

// Each kernel keeps kRows x kVectors sums in registers, fed by one broadcast element of `a` and
// kVectors vectors of b's row per step of k: rows at a time are as many as leave a register
// for each (32 with AVX-512, 16 with AVX2).

/// Asks for the cache line at column p of each row of the block after next. The rows a kernel
/// reads together are as many streams, which the processor's prefetchers did not follow: with
/// `a` from memory, (65536,128) x (128,16) ran at 40 GFLOP/s on one thread, against 111 with it
/// in cache; 53 prefetching one block ahead, 46-59 two blocks ahead (4.7-5.2 ms on 2 threads,
/// the product of 131072 rows).
template <int kRows>
[[gnu::always_inline]] inline void prefetch_rows_ahead(const float* a, int64_t a_leading,
                                                       int64_t p) {
#pragma GCC unroll 16
  for (int i = 0; i < kRows; ++i) {
    _mm_prefetch(reinterpret_cast<const char*>(a + (2 * kRows + i) * a_leading + p), _MM_HINT_T0);
  }
}

template <int kRows, int kVectors>
[[gnu::target("arch=x86-64-v4"), gnu::always_inline]] inline void rows_avx512(
    const float* a, int64_t a_leading, const float* panel, float* out, int64_t out_leading,
    int64_t k, int64_t n) {
  __m512 sums[kRows][kVectors];
#pragma GCC unroll 16
  for (int i = 0; i < kRows; ++i) {
#pragma GCC unroll 4
    for (int v = 0; v < kVectors; ++v) sums[i][v] = _mm512_setzero_ps();
  }
  for (int64_t p = 0; p < k; ++p) {
    if (p % 16 == 0) prefetch_rows_ahead<kRows>(a, a_leading, p);
    __m512 row[kVectors];
#pragma GCC unroll 4
    for (int v = 0; v < kVectors; ++v) row[v] = _mm512_loadu_ps(panel + (p * kVectors + v) * 16);
#pragma GCC unroll 16
    for (int i = 0; i < kRows; ++i) {
      const __m512 x = _mm512_set1_ps(a[i * a_leading + p]);
#pragma GCC unroll 4
      for (int v = 0; v < kVectors; ++v) sums[i][v] = _mm512_fmadd_ps(x, row[v], sums[i][v]);
    }
  }
#pragma GCC unroll 16
  for (int i = 0; i < kRows; ++i) {
#pragma GCC unroll 4
    for (int v = 0; v < kVectors; ++v) {
      const int64_t columns = std::min<int64_t>(16, n - v * 16);
      const auto mask = static_cast<__mmask16>((uint32_t{1} << columns) - 1);
      _mm512_mask_storeu_ps(out + i * out_leading + v * 16, mask, sums[i][v]);
    }
  }
}

template <int kRows, int kVectors>
[[gnu::target("arch=x86-64-v3"), gnu::always_inline]] inline void rows_avx2(
    const float* a, int64_t a_leading, const float* panel, float* out, int64_t out_leading,
    int64_t k, int64_t n) {
  __m256 sums[kRows][kVectors];
#pragma GCC unroll 16
  for (int i = 0; i < kRows; ++i) {
#pragma GCC unroll 4
    for (int v = 0; v < kVectors; ++v) sums[i][v] = _mm256_setzero_ps();
  }
  for (int64_t p = 0; p < k; ++p) {
    if (p % 16 == 0) prefetch_rows_ahead<kRows>(a, a_leading, p);
    __m256 row[kVectors];
#pragma GCC unroll 4
    for (int v = 0; v < kVectors; ++v) row[v] = _mm256_loadu_ps(panel + (p * kVectors + v) * 8);
#pragma GCC unroll 16
    for (int i = 0; i < kRows; ++i) {
      const __m256 x = _mm256_set1_ps(a[i * a_leading + p]);
#pragma GCC unroll 4
      for (int v = 0; v < kVectors; ++v) sums[i][v] = _mm256_fmadd_ps(x, row[v], sums[i][v]);
    }
  }
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
#pragma GCC unroll 16
  for (int i = 0; i < kRows; ++i) {
#pragma GCC unroll 4
    for (int v = 0; v < kVectors; ++v) {
      const auto columns = static_cast<int>(std::min<int64_t>(8, n - v * 8));
      const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(columns), lane);
      _mm256_maskstore_ps(out + i * out_leading + v * 8, mask, sums[i][v]);
    }
  }
}

/// out = a @ panel, kRows rows at a time, then the rest one by one.
template <int kRows, int kVectors>
[[gnu::target("arch=x86-64-v4")]] void loop_avx512(const float* a, int64_t a_leading,
                                                   const float* panel, float* out,
                                                   int64_t out_leading, int64_t m, int64_t k,
                                                   int64_t n) {
  int64_t row = 0;
  for (; row + kRows <= m; row += kRows) {
    rows_avx512<kRows, kVectors>(a + row * a_leading, a_leading, panel, out + row * out_leading,
                                 out_leading, k, n);
  }
  for (; row < m; ++row) {
    rows_avx512<1, kVectors>(a + row * a_leading, a_leading, panel, out + row * out_leading,
                             out_leading, k, n);
  }
}

template <int kRows, int kVectors>
[[gnu::target("arch=x86-64-v3")]] void loop_avx2(const float* a, int64_t a_leading,
                                                 const float* panel, float* out,
                                                 int64_t out_leading, int64_t m, int64_t k,
                                                 int64_t n) {
  int64_t row = 0;
  for (; row + kRows <= m; row += kRows) {
    rows_avx2<kRows, kVectors>(a + row * a_leading, a_leading, panel, out + row * out_leading,
                               out_leading, k, n);
  }
  for (; row < m; ++row) {
    rows_avx2<1, kVectors>(a + row * a_leading, a_leading, panel, out + row * out_leading,
                           out_leading, k, n);
  }
}

void multiply_avx512(const float* a, int64_t a_leading, const float* panel, float* out,
                     int64_t out_leading, int64_t m, int64_t k, int64_t n) {
  const auto loop = n <= 16 ? loop_avx512<8, 1> : loop_avx512<6, 2>;
  loop(a, a_leading, panel, out, out_leading, m, k, n);
}

void multiply_avx2(const float* a, int64_t a_leading, const float* panel, float* out,
                   int64_t out_leading, int64_t m, int64_t k, int64_t n) {
  const auto loop = n <= 8    ? loop_avx2<8, 1>
                    : n <= 16 ? loop_avx2<4, 2>
                    : n <= 24 ? loop_avx2<3, 3>
                              : loop_avx2<2, 4>;
  loop(a, a_leading, panel, out, out_leading, m, k, n);
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

/// The kernel of the widest vectors the processor has.
IsaKernel host_kernel() {
  static const IsaKernel kernel = kernel_for(NarrowGemmIsa::Avx512).multiply != nullptr
                                      ? kernel_for(NarrowGemmIsa::Avx512)
                                      : kernel_for(NarrowGemmIsa::Avx2);
  return kernel;
}

void multiply_with(const IsaKernel& kernel, GemmOperand<float> a, GemmOperand<float> b, float* out,
                   int64_t out_leading, int64_t m, int64_t k, int64_t n) {
  const int64_t padded = (n + kernel.width - 1) / kernel.width * kernel.width;
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

bool narrow_gemm_takes(GemmOperand<float> a, GemmOperand<float> b, int64_t n) {
  return n <= kMaxColumns && !a.transposed && !b.transposed && host_kernel().multiply != nullptr;
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
