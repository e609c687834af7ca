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

/// Element i of random_normal(seed, mean, std): Box-Muller on positions 2i and 2i+1.
LZ_HOST_DEVICE inline double normal_element(RandomBits seed, RandomBits i, double mean,
                                            double std) {
#if !defined(__CUDACC_RTC__) && !defined(__CUDACC__)
  using std::cos, std::log, std::sqrt;
#endif
  const double u1 = 1.0 - uniform_unit(seed, 2 * i);  // in (0, 1], so the log is finite
  const double u2 = uniform_unit(seed, 2 * i + 1);
  constexpr double kTwoPi = 6.283185307179586476925286766559;
  return mean + std * sqrt(-2.0 * log(u1)) * cos(kTwoPi * u2);
}

}  // namespace lz::reference
