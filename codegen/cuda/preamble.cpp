#include "codegen/cuda/preamble.h"

#include <string>

#include "codegen/cuda/embedded_sources.h"

namespace lz::codegen::cuda {

std::string_view device_preamble() {
  // The random numbers are reference/counter_rng.h itself, embedded at build time. The rest is
  // kept in step with reference/interpreter_internal.h by hand: a change there is a change here,
  // or the GPU computes other values than the interpreter (the CUDA emulation tests compare them).
  static constexpr std::string_view kRest = R"CUDA(
typedef long long lz_i64;
typedef unsigned long long lz_u64;
typedef unsigned char lz_bool_storage;

// Groups of four elements, loaded and stored as one 16-byte access (two for 8-byte elements, one
// 4-byte access for bools); the runtime's buffers are 256-byte aligned.
template <class T>
struct alignas(sizeof(T) * 4 < 16 ? sizeof(T) * 4 : 16) lz_pack4 {
  T v[4];
};

// Signed overflow is undefined: integer arithmetic wraps through the unsigned type.
__device__ __forceinline__ int lz_wrap_add(int a, int b) { return (int)((unsigned)a + (unsigned)b); }
__device__ __forceinline__ int lz_wrap_sub(int a, int b) { return (int)((unsigned)a - (unsigned)b); }
__device__ __forceinline__ int lz_wrap_mul(int a, int b) { return (int)((unsigned)a * (unsigned)b); }
__device__ __forceinline__ lz_i64 lz_wrap_add(lz_i64 a, lz_i64 b) { return (lz_i64)((lz_u64)a + (lz_u64)b); }
__device__ __forceinline__ lz_i64 lz_wrap_sub(lz_i64 a, lz_i64 b) { return (lz_i64)((lz_u64)a - (lz_u64)b); }
__device__ __forceinline__ lz_i64 lz_wrap_mul(lz_i64 a, lz_i64 b) { return (lz_i64)((lz_u64)a * (lz_u64)b); }

template <class T, class U>
__device__ T lz_integer_pow(T base, T exponent) {
  if (exponent < 0) {
    if (base == 1) return 1;
    if (base == -1) return (exponent & 1) != 0 ? -1 : 1;
    return 0;
  }
  U result = 1;
  U factor = (U)base;
  for (U remaining = (U)exponent; remaining != 0; remaining >>= 1) {
    if ((remaining & 1) != 0) result *= factor;
    factor *= factor;
  }
  return (T)result;
}

// numpy's maximum/minimum: a NaN operand (the first one) is the result.
template <class T>
__device__ __forceinline__ T lz_maximum(T a, T b) {
  if (a != a) return a;
  if (b != b) return b;
  return a >= b ? a : b;
}
template <class T>
__device__ __forceinline__ T lz_minimum(T a, T b) {
  if (a != a) return a;
  if (b != b) return b;
  return a <= b ? a : b;
}

// Floating to integer: NaN gives 0, otherwise truncation toward zero, saturating.
__device__ __forceinline__ int lz_to_i32(double value) {
  if (value != value) return 0;
  if (value < -2147483648.0) return -2147483647 - 1;
  if (value >= 2147483648.0) return 2147483647;
  return (int)value;
}
__device__ __forceinline__ lz_i64 lz_to_i64(double value) {
  if (value != value) return 0;
  if (value < -9223372036854775808.0) return -9223372036854775807LL - 1;
  if (value >= 9223372036854775808.0) return 9223372036854775807LL;
  return (lz_i64)value;
}

__device__ __forceinline__ double lz_nan_f64() { return __longlong_as_double(0x7ff8000000000000LL); }
__device__ __forceinline__ float lz_nan_f32() { return __int_as_float(0x7fc00000); }
__device__ __forceinline__ double lz_inf_f64() { return __longlong_as_double(0x7ff0000000000000LL); }
__device__ __forceinline__ float lz_inf_f32() { return __int_as_float(0x7f800000); }

// Counter-based random numbers (reference/counter_rng.h, above), rounded to each dtype as the
// interpreter rounds them.
__device__ __forceinline__ double lz_uniform_element(lz_u64 seed, lz_u64 i, double low, double high) {
  return lz::reference::uniform_element(seed, i, low, high);
}
__device__ __forceinline__ float lz_random_uniform_f32(lz_u64 seed, lz_i64 i, double low, double high) {
  const float rounded = (float)lz_uniform_element(seed, (lz_u64)i, low, high);
  return rounded >= (float)high && low < high ? nextafterf((float)high, (float)low) : rounded;
}
__device__ __forceinline__ double lz_random_uniform_f64(lz_u64 seed, lz_i64 i, double low, double high) {
  const double value = lz_uniform_element(seed, (lz_u64)i, low, high);
  return value >= high && low < high ? nextafter(high, low) : value;
}
__device__ __forceinline__ int lz_random_uniform_i32(lz_u64 seed, lz_i64 i, double low, double high) {
  return lz_to_i32(floor(lz_uniform_element(seed, (lz_u64)i, low, high)));
}
__device__ __forceinline__ lz_i64 lz_random_uniform_i64(lz_u64 seed, lz_i64 i, double low, double high) {
  return lz_to_i64(floor(lz_uniform_element(seed, (lz_u64)i, low, high)));
}
__device__ __forceinline__ double lz_random_normal_f64(lz_u64 seed, lz_i64 i, double mean, double std) {
  return lz::reference::normal_element(seed, (lz_u64)i, mean, std);
}
__device__ __forceinline__ float lz_random_normal_f32(lz_u64 seed, lz_i64 i, double mean, double std) {
  return (float)lz_random_normal_f64(seed, i, mean, std);
}

__device__ __forceinline__ lz_i64 lz_global_thread() {
  return (lz_i64)blockIdx.x * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ lz_i64 lz_grid_threads() { return (lz_i64)gridDim.x * blockDim.x; }
)CUDA";
  static const std::string preamble =
      "// lazuli generated code\n" + std::string(kCounterRngSource) + std::string(kRest);
  return preamble;
}

}  // namespace lz::codegen::cuda
