// The fake driver's state that the fake cuBLAS (cublas.cpp) shares: contexts, streams and device
// memory. One library implements the driver, NVRTC and cuBLAS; CMakeLists.txt names it
// libcuda.so.1, libnvrtc.so.13 and libcublas.so.13, and the dynamic loader, seeing one file,
// loads it once.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

// The opaque handle types of cuda.h: behind each is an object of the emulation.
struct CUctx_st;
struct CUstream_st;
struct CUevent_st;
struct CUmod_st;
struct CUfunc_st;
using CUcontext = CUctx_st*;
using CUstream = CUstream_st*;
using CUevent = CUevent_st*;
using CUmodule = CUmod_st*;
using CUfunction = CUfunc_st*;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUresult = int;  // cuda.h's enum cudaError_enum, an int

/// Marks the entry points of the three libraries (everything else is hidden).
#define LZ_EMULATION_EXPORT extern "C" __attribute__((visibility("default")))

namespace lz::cuda_emulation {

// The CUresult values used (cuda.h).
inline constexpr CUresult kSuccess = 0;
inline constexpr CUresult kErrorInvalidValue = 1;
inline constexpr CUresult kErrorOutOfMemory = 2;
inline constexpr CUresult kErrorNotInitialized = 3;
inline constexpr CUresult kErrorInvalidDevice = 101;
inline constexpr CUresult kErrorInvalidImage = 200;
inline constexpr CUresult kErrorInvalidContext = 201;
inline constexpr CUresult kErrorInvalidHandle = 400;
inline constexpr CUresult kErrorNotFound = 500;
inline constexpr CUresult kErrorNotReady = 600;
inline constexpr CUresult kErrorIllegalAddress = 700;
inline constexpr CUresult kErrorNotSupported = 801;

class Stream;

/// A device's primary context.
struct Context {
  int device = 0;
  std::atomic<int> retained{0};
  /// The error of a device fault: once set, every call in the context returns it (CUDA's
  /// "sticky" errors), and queued work no longer runs.
  std::atomic<CUresult> fault{kSuccess};
};

/// The calling thread's current context, or null.
Context* current_context();

/// The stream behind `handle` in `context` (null, CU_STREAM_LEGACY or CU_STREAM_PER_THREAD: the
/// context's default stream); null when `handle` is no live stream.
Stream* find_stream(CUstream handle, Context& context);

/// The device of the live allocation holding [address, address + bytes), or -1 when none does.
int device_holding(CUdeviceptr address, size_t bytes);

/// A device fault met while running queued work: says what on stderr and makes `context`'s
/// error sticky.
void fault(Context& context, CUresult error, const std::string& what);

/// Says on stderr why a call is refused, for what its error code alone does not tell.
void report_misuse(const std::string& what);

}  // namespace lz::cuda_emulation
