// The CUDA driver API, loaded at run time with dlopen("libcuda.so.1"): lazuli builds, loads and
// runs where there is no GPU and no CUDA toolkit, and only a program that asks for a CUDA device
// needs the driver. The few types and entry points used are declared here (by their ABI, as in
// the toolkit's cuda.h), so no CUDA header is needed to build.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace lz::runtime::cuda {

// Opaque handles and plain types of the driver API.
using CUresult = int;  // CUDA_SUCCESS is 0
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;
using CUevent = struct CUevent_st*;

// The device attributes, flags and results lazuli uses (values from cuda.h).
constexpr int kAttributeMultiprocessorCount = 16;
constexpr int kAttributeComputeCapabilityMajor = 75;
constexpr int kAttributeComputeCapabilityMinor = 76;
constexpr unsigned kStreamNonBlocking = 1;
constexpr unsigned kEventDisableTiming = 2;
constexpr CUresult kErrorOutOfMemory = 2;
constexpr CUresult kErrorNotReady = 600;

/// Entry points of libcuda.so.1, resolved by their versioned symbol names.
struct DriverApi {
  CUresult (*init)(unsigned flags);
  CUresult (*driver_get_version)(int* version);
  CUresult (*get_error_name)(CUresult error, const char** name);
  CUresult (*get_error_string)(CUresult error, const char** text);
  CUresult (*device_get_count)(int* count);
  CUresult (*device_get)(CUdevice* device, int ordinal);
  CUresult (*device_get_name)(char* name, int length, CUdevice device);
  CUresult (*device_get_attribute)(int* value, int attribute, CUdevice device);
  CUresult (*device_total_mem)(size_t* bytes, CUdevice device);
  CUresult (*primary_ctx_retain)(CUcontext* context, CUdevice device);
  CUresult (*primary_ctx_release)(CUdevice device);
  CUresult (*ctx_set_current)(CUcontext context);
  CUresult (*ctx_synchronize)();
  CUresult (*module_load_data)(CUmodule* module, const void* image);
  CUresult (*module_unload)(CUmodule module);
  CUresult (*module_get_function)(CUfunction* function, CUmodule module, const char* name);
  CUresult (*launch_kernel)(CUfunction function, unsigned grid_x, unsigned grid_y, unsigned grid_z,
                            unsigned block_x, unsigned block_y, unsigned block_z,
                            unsigned shared_bytes, CUstream stream, void** parameters,
                            void** extra);
  CUresult (*mem_alloc)(CUdeviceptr* pointer, size_t bytes);
  CUresult (*mem_free)(CUdeviceptr pointer);
  CUresult (*mem_alloc_host)(void** pointer, size_t bytes);
  CUresult (*mem_free_host)(void* pointer);
  CUresult (*memcpy_htod_async)(CUdeviceptr to, const void* from, size_t bytes, CUstream stream);
  CUresult (*memcpy_dtoh_async)(void* to, CUdeviceptr from, size_t bytes, CUstream stream);
  CUresult (*memcpy_dtod_async)(CUdeviceptr to, CUdeviceptr from, size_t bytes, CUstream stream);
  CUresult (*memset_d8_async)(CUdeviceptr to, unsigned char value, size_t bytes, CUstream stream);
  CUresult (*stream_create)(CUstream* stream, unsigned flags);
  CUresult (*stream_destroy)(CUstream stream);
  CUresult (*stream_synchronize)(CUstream stream);
  CUresult (*stream_wait_event)(CUstream stream, CUevent event, unsigned flags);
  CUresult (*event_create)(CUevent* event, unsigned flags);
  CUresult (*event_destroy)(CUevent event);
  CUresult (*event_record)(CUevent event, CUstream stream);
  CUresult (*event_query)(CUevent event);
  CUresult (*event_synchronize)(CUevent event);
  CUresult (*event_elapsed_time)(float* milliseconds, CUevent start, CUevent end);
};

/// What the loaded driver offers: its entry points and the devices it found.
struct Driver {
  DriverApi api{};
  int version = 0;  // e.g. 13000 for CUDA 13.0
  int device_count = 0;
};

/// The driver when libcuda.so.1 loads, initializes and finds at least one device; otherwise
/// null, and `why` (when given) says what was missing. Loaded once; thread-safe.
const Driver* driver(std::string* why = nullptr);

/// Loads and initializes the driver library at `path` (driver() uses "libcuda.so.1"); the test
/// of the loader points it at the toolkit's stub library. Null with `why` on any failure. The
/// library stays loaded for the rest of the process.
std::unique_ptr<Driver> load_driver(const std::string& path, std::string* why);

/// Throws lz::Error "[<op>] <call> failed: CUDA_ERROR_... (<description>)" unless `result` is
/// success.
void check(const Driver& driver, CUresult result, const char* op, const char* call);

/// One device's description, for logs and for choosing the code generation target.
struct DeviceProperties {
  std::string name;
  int compute_major = 0;
  int compute_minor = 0;
  int multiprocessors = 0;
  size_t memory_bytes = 0;
  /// "sm_90" for compute capability 9.0.
  std::string architecture() const;
};

/// The properties of CUDA device `ordinal` (0 <= ordinal < driver()->device_count).
DeviceProperties device_properties(int ordinal);

}  // namespace lz::runtime::cuda
