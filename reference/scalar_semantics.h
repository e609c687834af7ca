// What one element of an op computes where C++ alone leaves it undefined or open: integer
// arithmetic that wraps, integer powers, floating-to-integer conversion, numpy's NaN rule for
// maximum and minimum, and random numbers rounded to each dtype. Written in the C++ that both the
// host compiler and NVRTC accept, with no headers on the device: the interpreter and the CPU JIT's
// helpers call these functions, and the build embeds this file in every CUDA kernel's preamble
// (codegen/cuda/preamble.cpp), so no device computes other values than the interpreter.
#pragma once

#include "reference/counter_rng.h"

#if !defined(__CUDACC_RTC__) && !defined(__CUDACC__)
#include <cmath>
#endif

namespace lz::reference {

/// The unsigned integer type of T's width, whose arithmetic wraps (NVRTC has no <type_traits>).
template <class T>
struct WrappingType;
template <>
struct WrappingType<int> {
  typedef unsigned type;
};
template <>
struct WrappingType<long> {
  typedef unsigned long type;
};
template <>
struct WrappingType<long long> {
  typedef unsigned long long type;
};

// Signed overflow is undefined behaviour, so integer arithmetic happens in the unsigned type of
// the same width, which wraps; converting back is two's complement (defined since C++20).
template <class T>
LZ_HOST_DEVICE inline T wrapping_add(T a, T b) {
  typedef typename WrappingType<T>::type U;
  return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
}
template <class T>
LZ_HOST_DEVICE inline T wrapping_sub(T a, T b) {
  typedef typename WrappingType<T>::type U;
  return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
}
template <class T>
LZ_HOST_DEVICE inline T wrapping_mul(T a, T b) {
  typedef typename WrappingType<T>::type U;
  return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
}

/// base ** exponent with wrapping multiplication; a negative exponent gives the integer part of
/// the real result (1 for base 1, +-1 for base -1, otherwise 0).
template <class T>
LZ_HOST_DEVICE inline T integer_pow(T base, T exponent) {
  if (exponent < 0) {
    if (base == 1) return 1;
    if (base == -1) return (exponent & 1) != 0 ? -1 : 1;
    return 0;
  }
  typedef typename WrappingType<T>::type U;
  U result = 1;
  U factor = static_cast<U>(base);
  for (U remaining = static_cast<U>(exponent); remaining != 0; remaining >>= 1) {
    if ((remaining & 1) != 0) result *= factor;
    factor *= factor;
  }
  return static_cast<T>(result);
}

/// A floating value converted to integer type T: NaN gives 0, otherwise truncation toward zero,
/// saturating at T's range.
template <class T>
LZ_HOST_DEVICE inline T saturating_float_to_integer(double value) {
  typedef typename WrappingType<T>::type U;
  const T lowest = static_cast<T>(static_cast<U>(1) << (sizeof(T) * 8 - 1));
  const T highest = static_cast<T>(~static_cast<U>(lowest));
  // Both bounds are powers of two, so they are exact doubles; -low is one past the largest value.
  const double low = static_cast<double>(lowest);
  if (value != value) return 0;
  if (value < low) return lowest;
  if (value >= -low) return highest;
  return static_cast<T>(value);
}

/// numpy's maximum and minimum of floating values: a NaN operand (the first one) is the result.
template <class T>
LZ_HOST_DEVICE inline T nan_propagating_maximum(T a, T b) {
  if (a != a) return a;
  if (b != b) return b;
  return a >= b ? a : b;
}
template <class T>
LZ_HOST_DEVICE inline T nan_propagating_minimum(T a, T b) {
  if (a != a) return a;
  if (b != b) return b;
  return a <= b ? a : b;
}

/// Element i of random_uniform(seed, low, high) in element type T (not bool). Floating values
/// stay below `high` after rounding; integers are the floor, saturated.
template <class T>
LZ_HOST_DEVICE inline T uniform_element_as(RandomBits seed, RandomBits i, double low, double high) {
#if !defined(__CUDACC_RTC__) && !defined(__CUDACC__)
  using std::floor, std::nextafter;
#endif
  const double value = uniform_element(seed, i, low, high);
  if constexpr (static_cast<T>(0.5) != 0) {
    // Rounding to float32 can reach `high` itself; the range is half-open in every dtype.
    const T rounded = static_cast<T>(value);
    return rounded >= static_cast<T>(high) && low < high
               ? nextafter(static_cast<T>(high), static_cast<T>(low))
               : rounded;
  } else {
    return saturating_float_to_integer<T>(floor(value));
  }
}

/// Element i of random_normal(seed, mean, std) in floating type T.
template <class T>
LZ_HOST_DEVICE inline T normal_element_as(RandomBits seed, RandomBits i, double mean, double std) {
  return static_cast<T>(normal_element(seed, i, mean, std));
}

}  // namespace lz::reference
