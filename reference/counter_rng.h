// The definition of lazuli's random numbers: element i of a random tensor depends only on the
// seed and i, so every device, mode and kernel split produces the same values.
#pragma once

#include <cmath>
#include <cstdint>

namespace lz::reference {

/// SplitMix64's output function: a bijective 64-bit mixer.
constexpr uint64_t mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

/// 64 random bits for position `counter` of the stream `seed` (SplitMix64 at that position).
constexpr uint64_t random_bits(uint64_t seed, uint64_t counter) {
  return mix64(mix64(seed) + (counter + 1) * 0x9e3779b97f4a7c15ULL);
}

/// Uniform in [0, 1) with 53 random bits.
inline double uniform_unit(uint64_t seed, uint64_t counter) {
  return static_cast<double>(random_bits(seed, counter) >> 11) * 0x1p-53;
}

/// Element i of random_uniform(seed, low, high), before conversion to the tensor's dtype.
inline double uniform_element(uint64_t seed, uint64_t i, double low, double high) {
  return low + (high - low) * uniform_unit(seed, i);
}

/// Element i of random_normal(seed, mean, std): Box-Muller on positions 2i and 2i+1.
inline double normal_element(uint64_t seed, uint64_t i, double mean, double std) {
  const double u1 = 1.0 - uniform_unit(seed, 2 * i);  // in (0, 1], so the log is finite
  const double u2 = uniform_unit(seed, 2 * i + 1);
  constexpr double kTwoPi = 6.283185307179586476925286766559;
  return mean + std * std::sqrt(-2.0 * std::log(u1)) * std::cos(kTwoPi * u2);
}

}  // namespace lz::reference
