#include "runtime/cuda/driver.h"

#include <dlfcn.h>

#include <mutex>

#include "lazuli/error.h"

namespace lz::runtime::cuda {
namespace {

/// Resolves `symbol` into `entry`; false (with `why`) when the library lacks it.
template <class Function>
bool resolve(void* library, const char* symbol, Function& entry, std::string* why) {
  entry = reinterpret_cast<Function>(dlsym(library, symbol));
  if (entry != nullptr) return true;
  if (why != nullptr) *why = std::string("the CUDA driver has no ") + symbol + " (too old?)";
  return false;
}

bool resolve_all(void* library, DriverApi& api, std::string* why) {
  // Versioned names are those cuda.h maps the plain names to (cuMemAlloc -> cuMemAlloc_v2).
  return resolve(library, "cuInit", api.init, why) &&
         resolve(library, "cuDriverGetVersion", api.driver_get_version, why) &&
         resolve(library, "cuGetErrorName", api.get_error_name, why) &&
         resolve(library, "cuGetErrorString", api.get_error_string, why) &&
         resolve(library, "cuDeviceGetCount", api.device_get_count, why) &&
         resolve(library, "cuDeviceGet", api.device_get, why) &&
         resolve(library, "cuDeviceGetName", api.device_get_name, why) &&
         resolve(library, "cuDeviceGetAttribute", api.device_get_attribute, why) &&
         resolve(library, "cuDeviceTotalMem_v2", api.device_total_mem, why) &&
         resolve(library, "cuDevicePrimaryCtxRetain", api.primary_ctx_retain, why) &&
         resolve(library, "cuDevicePrimaryCtxRelease_v2", api.primary_ctx_release, why) &&
         resolve(library, "cuCtxSetCurrent", api.ctx_set_current, why) &&
         resolve(library, "cuCtxSynchronize", api.ctx_synchronize, why) &&
         resolve(library, "cuModuleLoadData", api.module_load_data, why) &&
         resolve(library, "cuModuleUnload", api.module_unload, why) &&
         resolve(library, "cuModuleGetFunction", api.module_get_function, why) &&
         resolve(library, "cuLaunchKernel", api.launch_kernel, why) &&
         resolve(library, "cuMemAlloc_v2", api.mem_alloc, why) &&
         resolve(library, "cuMemFree_v2", api.mem_free, why) &&
         resolve(library, "cuMemAllocHost_v2", api.mem_alloc_host, why) &&
         resolve(library, "cuMemFreeHost", api.mem_free_host, why) &&
         resolve(library, "cuMemcpyHtoDAsync_v2", api.memcpy_htod_async, why) &&
         resolve(library, "cuMemcpyDtoHAsync_v2", api.memcpy_dtoh_async, why) &&
         resolve(library, "cuMemcpyDtoDAsync_v2", api.memcpy_dtod_async, why) &&
         resolve(library, "cuMemsetD8Async", api.memset_d8_async, why) &&
         resolve(library, "cuStreamCreate", api.stream_create, why) &&
         resolve(library, "cuStreamDestroy_v2", api.stream_destroy, why) &&
         resolve(library, "cuStreamSynchronize", api.stream_synchronize, why) &&
         resolve(library, "cuStreamWaitEvent", api.stream_wait_event, why) &&
         resolve(library, "cuEventCreate", api.event_create, why) &&
         resolve(library, "cuEventDestroy_v2", api.event_destroy, why) &&
         resolve(library, "cuEventRecord", api.event_record, why) &&
         resolve(library, "cuEventQuery", api.event_query, why) &&
         resolve(library, "cuEventSynchronize", api.event_synchronize, why) &&
         // Drivers before CUDA 12.8 have only the first version, which 13.0 keeps.
         (resolve(library, "cuEventElapsedTime_v2", api.event_elapsed_time, nullptr) ||
          resolve(library, "cuEventElapsedTime", api.event_elapsed_time, why));
}

/// Names of the results a driver that cannot describe itself (the toolkit's stub) returns.
const char* known_result_name(CUresult result) {
  switch (result) {
    case 2: return "CUDA_ERROR_OUT_OF_MEMORY";
    case 3: return "CUDA_ERROR_NOT_INITIALIZED";
    case 34: return "CUDA_ERROR_STUB_LIBRARY";
    case 35: return "CUDA_ERROR_INSUFFICIENT_DRIVER";
    case 100: return "CUDA_ERROR_NO_DEVICE";
    default: return "CUDA_ERROR_UNKNOWN";
  }
}

std::string describe(const DriverApi& api, CUresult result) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (api.get_error_name(result, &name) != 0 || name == nullptr) name = known_result_name(result);
  if (api.get_error_string(result, &text) != 0 || text == nullptr) text = "no description";
  return std::string(name) + " (" + text + ", code " + std::to_string(result) + ")";
}

}  // namespace

std::unique_ptr<Driver> load_driver(const std::string& path, std::string* why) {
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    if (why != nullptr) *why = "cannot load " + path + ": " + dlerror();
    return nullptr;
  }
  auto loaded = std::make_unique<Driver>();
  if (!resolve_all(library, loaded->api, why)) return nullptr;
  const DriverApi& api = loaded->api;
  if (const CUresult result = api.init(0); result != 0) {
    if (why != nullptr) *why = "cuInit failed: " + describe(api, result);
    return nullptr;
  }
  if (const CUresult result = api.driver_get_version(&loaded->version); result != 0) {
    if (why != nullptr) *why = "cuDriverGetVersion failed: " + describe(api, result);
    return nullptr;
  }
  if (const CUresult result = api.device_get_count(&loaded->device_count); result != 0) {
    if (why != nullptr) *why = "cuDeviceGetCount failed: " + describe(api, result);
    return nullptr;
  }
  if (loaded->device_count == 0) {
    if (why != nullptr) *why = "the CUDA driver found no device";
    return nullptr;
  }
  return loaded;
}

const Driver* driver(std::string* why) {
  static std::string failure;
  static const Driver* const loaded = load_driver("libcuda.so.1", &failure).release();
  if (loaded == nullptr && why != nullptr) *why = failure;
  return loaded;
}

void check(const Driver& driver, CUresult result, const char* op, const char* call) {
  if (result == 0) return;
  throw Error("[" + std::string(op) + "] " + call + " failed: " + describe(driver.api, result));
}

std::string DeviceProperties::architecture() const {
  return "sm_" + std::to_string(compute_major) + std::to_string(compute_minor);
}

DeviceProperties device_properties(int ordinal) {
  std::string why;
  const Driver* loaded = driver(&why);
  if (loaded == nullptr) throw Error("[cuda] no CUDA device: " + why);
  if (ordinal < 0 || ordinal >= loaded->device_count) {
    throw Error("[cuda] device " + std::to_string(ordinal) + " does not exist; this machine has " +
                std::to_string(loaded->device_count) + " (0.." +
                std::to_string(loaded->device_count - 1) + ")");
  }
  const DriverApi& api = loaded->api;
  CUdevice device = 0;
  check(*loaded, api.device_get(&device, ordinal), "cuda", "cuDeviceGet");
  DeviceProperties properties;
  char name[256] = {};
  check(*loaded, api.device_get_name(name, sizeof(name), device), "cuda", "cuDeviceGetName");
  properties.name = name;
  check(
      *loaded,
      api.device_get_attribute(&properties.compute_major, kAttributeComputeCapabilityMajor, device),
      "cuda", "cuDeviceGetAttribute");
  check(
      *loaded,
      api.device_get_attribute(&properties.compute_minor, kAttributeComputeCapabilityMinor, device),
      "cuda", "cuDeviceGetAttribute");
  check(
      *loaded,
      api.device_get_attribute(&properties.multiprocessors, kAttributeMultiprocessorCount, device),
      "cuda", "cuDeviceGetAttribute");
  check(*loaded, api.device_total_mem(&properties.memory_bytes, device), "cuda",
        "cuDeviceTotalMem");
  return properties;
}

}  // namespace lz::runtime::cuda
