// The definition of lazuli's random numbers: element i of a random tensor depends only on the
// seed and i, so every device, mode and kernel split produces the same values. Written in the
// C++ that both the host compiler and NVRTC accept: the build embeds this file in every CUDA
// kernel's preamble (codegen/cuda/preamble.cpp), so the GPU computes these very functions.
#pragma once

#if defined(__CUDACC_RTC__) || defined(__CUDACC__)
#define LZ_HOST_DEVICE __host__ __device__
#else
#include <cmath>
#include <cstdint>
#include <cstring>
#define LZ_HOST_DEVICE
#endif

namespace lz::reference {

#if defined(__CUDACC_RTC__) || defined(__CUDACC__)
typedef unsigned long long RandomBits;  // NVRTC has no <cstdint>
#else
using RandomBits = std::uint64_t;
#endif

/// SplitMix64's output function: a bijective 64-bit mixer.
LZ_HOST_DEVICE constexpr RandomBits mix64(RandomBits x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

/// 64 random bits for position `counter` of the stream `seed` (SplitMix64 at that position).
LZ_HOST_DEVICE constexpr RandomBits random_bits(RandomBits seed, RandomBits counter) {
  return mix64(mix64(seed) + (counter + 1) * 0x9e3779b97f4a7c15ULL);
}

/// Uniform in [0, 1) with 53 random bits.
LZ_HOST_DEVICE inline double uniform_unit(RandomBits seed, RandomBits counter) {
  return static_cast<double>(random_bits(seed, counter) >> 11) * 0x1p-53;
}

/// Element i of random_uniform(seed, low, high), before conversion to the tensor's dtype.
LZ_HOST_DEVICE inline double uniform_element(RandomBits seed, RandomBits i, double low,
                                             double high) {
  return low + (high - low) * uniform_unit(seed, i);
}

// Box-Muller needs a logarithm and a cosine. Each is written out here, in additions,
// multiplications and one division, each rounded once (no fused multiply-add: NVRTC runs with
// --fmad=false), rather than taken from a math library: the CPU's compiled kernels compute these
// very operations a vector of elements at a time (codegen/cpu/random_numbers.cpp), and every
// device gives the same bits. Both are within an ulp or two of the correctly rounded value.

LZ_HOST_DEVICE inline RandomBits bits_of(double x) {
#if defined(__CUDACC_RTC__) || defined(__CUDACC__)
  return static_cast<RandomBits>(__double_as_longlong(x));
#else
  RandomBits bits;
  std::memcpy(&bits, &x, sizeof bits);
  return bits;
#endif
}

LZ_HOST_DEVICE inline double double_of(RandomBits bits) {
#if defined(__CUDACC_RTC__) || defined(__CUDACC__)
  return __longlong_as_double(static_cast<long long>(bits));
#else
  double x;
  std::memcpy(&x, &bits, sizeof x);
  return x;
#endif
}

// The constants are functions, not variables: NVRTC would give each variable a float64 global
// in every kernel's PTX.

/// Term i (0 to 6) of log(1 + f) = 2s + s * R(s^2) with s = f / (2 + f), fdlibm's e_log.c.
LZ_HOST_DEVICE constexpr double log_term(int i) {
  return i == 0   ? 6.666666666666735130e-01
         : i == 1 ? 3.999999999940941908e-01
         : i == 2 ? 2.857142874366239149e-01
         : i == 3 ? 2.222219843214978396e-01
         : i == 4 ? 1.818357216161805012e-01
         : i == 5 ? 1.531383769920937332e-01
                  : 1.479819860511658591e-01;
}
/// log(2) in two parts: the first's last 32 bits are zero, so k times it is exact.
LZ_HOST_DEVICE constexpr double ln2_high() { return 6.93147180369123816490e-01; }
LZ_HOST_DEVICE constexpr double ln2_low() { return 1.90821492927058770002e-10; }
/// sqrt(2) scaled into [1, 2), as bits.
LZ_HOST_DEVICE constexpr RandomBits sqrt_two_bits() { return 0x3ff6a09e667f3bcdULL; }

/// The natural logarithm of u, a positive normal number (Box-Muller's u1, in [2^-53, 1]).
LZ_HOST_DEVICE inline double log_of_normal(double u) {
  const RandomBits bits = bits_of(u);
  // u = 2^k * m with m in [sqrt(2)/2, sqrt(2)): log(u) = k log(2) + log(1 + f), f = m - 1.
  RandomBits mantissa = (bits & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL;
  const bool above = mantissa > sqrt_two_bits();
  mantissa -= above ? 0x0010000000000000ULL : 0;  // m / 2
  const double k = static_cast<double>(static_cast<long long>(bits >> 52) - 1023 + (above ? 1 : 0));
  const double f = double_of(mantissa) - 1.0;
  const double s = f / (2.0 + f);
  const double z = s * s;
  const double w = z * z;
  const double even = w * (log_term(1) + w * (log_term(3) + w * log_term(5)));
  const double odd = z * (log_term(0) + w * (log_term(2) + w * (log_term(4) + w * log_term(6))));
  const double r = odd + even;
  const double half_square = 0.5 * f * f;
  return k * ln2_high() - ((half_square - (s * (half_square + r) + k * ln2_low())) - f);
}

// Taylor terms of cos and sin on [-pi/4, pi/4], term i the coefficient of x^(16 - 2i) and
// x^(17 - 2i): x^16/16! and x^17/17! are the last above an ulp there.
LZ_HOST_DEVICE constexpr double cos_term(int i) {
  return i == 0   ? 4.779477332387385297e-14
         : i == 1 ? -1.147074559772972471e-11
         : i == 2 ? 2.087675698786809898e-09
         : i == 3 ? -2.755731922398589065e-07
         : i == 4 ? 2.480158730158730158e-05
         : i == 5 ? -1.388888888888888889e-03
         : i == 6 ? 4.166666666666666667e-02
         : i == 7 ? -5.000000000000000000e-01
                  : 1.0;
}
LZ_HOST_DEVICE constexpr double sin_term(int i) {
  return i == 0   ? 2.811457254345520763e-15
         : i == 1 ? -7.647163731819816476e-13
         : i == 2 ? 1.605904383682161460e-10
         : i == 3 ? -2.505210838544171878e-08
         : i == 4 ? 2.755731922398589065e-06
         : i == 5 ? -1.984126984126984127e-04
         : i == 6 ? 8.333333333333333333e-03
         : i == 7 ? -1.666666666666666667e-01
                  : 1.0;
}
LZ_HOST_DEVICE constexpr double half_pi() { return 1.570796326794896619231321691639751; }

/// cos(2 pi u) for u in [0, 1) (Box-Muller's u2).
LZ_HOST_DEVICE inline double cos_of_turn(double u) {
  // 2 pi u = q pi/2 + x with q the nearest quarter turn: u * 4, and its distance to q, are exact.
  const double quarters = u * 4.0;
  const double q = static_cast<double>(static_cast<long long>(quarters + 0.5));
  const double x = (quarters - q) * half_pi();
  const double x2 = x * x;
  double c = cos_term(0);
  double s = sin_term(0);
  for (int t = 1; t < 9; ++t) {
    c = c * x2 + cos_term(t);
    s = s * x2 + sin_term(t);
  }
  s = s * x;
  // cos(q pi/2 + x): cos x, -sin x, -cos x, sin x as q is 0, 1, 2, 3 (4 is 0).
  const long long quadrant = static_cast<long long>(q) & 3;
  const double value = (quadrant & 1) != 0 ? s : c;
  return quadrant == 1 || quadrant == 2 ? -value : value;
}

/// Element i of random_normal(seed, mean, std): Box-Muller on positions 2i and 2i+1.
LZ_HOST_DEVICE inline double normal_element(RandomBits seed, RandomBits i, double mean,
                                            double std) {
#if !defined(__CUDACC_RTC__) && !defined(__CUDACC__)
  using std::sqrt;
#endif
  const double u1 = 1.0 - uniform_unit(seed, 2 * i);  // in (0, 1], so the log is finite
  const double u2 = uniform_unit(seed, 2 * i + 1);
  return mean + std * sqrt(-2.0 * log_of_normal(u1)) * cos_of_turn(u2);
}

}  // namespace lz::reference
