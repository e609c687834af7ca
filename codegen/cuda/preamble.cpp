#include "codegen/cuda/preamble.h"

#include <string>

#include "codegen/cuda/embedded_sources.h"

namespace lz::codegen::cuda {

std::string_view device_preamble() {
  // What an element computes (integer wrapping, conversions, NaN rules, random numbers) is
  // reference/counter_rng.h and reference/scalar_semantics.h themselves, embedded at build time
  // and called as lz::reference::<function><type>(...). The rest is the device's own: types,
  // vector accesses, special values, thread indices.
  static constexpr std::string_view kDevice = R"CUDA(
typedef long long lz_i64;
typedef unsigned long long lz_u64;
typedef unsigned char lz_bool_storage;

// Groups of four elements, loaded and stored as one 16-byte access (two for 8-byte elements, one
// 4-byte access for bools); the runtime's buffers are 256-byte aligned.
template <class T>
struct alignas(sizeof(T) * 4 < 16 ? sizeof(T) * 4 : 16) lz_pack4 {
  T v[4];
};

__device__ __forceinline__ double lz_nan_f64() { return __longlong_as_double(0x7ff8000000000000LL); }
__device__ __forceinline__ float lz_nan_f32() { return __int_as_float(0x7fc00000); }
__device__ __forceinline__ double lz_inf_f64() { return __longlong_as_double(0x7ff0000000000000LL); }
__device__ __forceinline__ float lz_inf_f32() { return __int_as_float(0x7f800000); }

__device__ __forceinline__ lz_i64 lz_global_thread() {
  return (lz_i64)blockIdx.x * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ lz_i64 lz_grid_threads() { return (lz_i64)gridDim.x * blockDim.x; }
)CUDA";
  static const std::string preamble = "// lazuli generated code\n" +
                                      std::string(kCounterRngSource) +
                                      std::string(kScalarSemanticsSource) + std::string(kDevice);
  return preamble;
}

}  // namespace lz::codegen::cuda
