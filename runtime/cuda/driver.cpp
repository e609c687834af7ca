#include "runtime/cuda/driver.h"

#include <mutex>

#include "lazuli/error.h"
#include "support/shared_library.h"

namespace lz::runtime::cuda {
namespace {

bool resolve_all(void* library, DriverApi& api, std::string* why) {
  std::string failure;
  const auto resolve = [&](const char* symbol, auto& entry) {
    return support::resolve_symbol(library, "the CUDA driver", symbol, entry, failure);
  };
  // Versioned names are those cuda.h maps the plain names to (cuMemAlloc -> cuMemAlloc_v2).
  const bool all =
      resolve("cuInit", api.init) && resolve("cuDriverGetVersion", api.driver_get_version) &&
      resolve("cuGetErrorName", api.get_error_name) &&
      resolve("cuGetErrorString", api.get_error_string) &&
      resolve("cuDeviceGetCount", api.device_get_count) && resolve("cuDeviceGet", api.device_get) &&
      resolve("cuDeviceGetName", api.device_get_name) &&
      resolve("cuDeviceGetAttribute", api.device_get_attribute) &&
      resolve("cuDeviceTotalMem_v2", api.device_total_mem) &&
      resolve("cuDevicePrimaryCtxRetain", api.primary_ctx_retain) &&
      resolve("cuDevicePrimaryCtxRelease_v2", api.primary_ctx_release) &&
      resolve("cuCtxSetCurrent", api.ctx_set_current) &&
      resolve("cuCtxSynchronize", api.ctx_synchronize) &&
      resolve("cuModuleLoadData", api.module_load_data) &&
      resolve("cuModuleUnload", api.module_unload) &&
      resolve("cuModuleGetFunction", api.module_get_function) &&
      resolve("cuLaunchKernel", api.launch_kernel) && resolve("cuMemAlloc_v2", api.mem_alloc) &&
      resolve("cuMemFree_v2", api.mem_free) && resolve("cuMemAllocHost_v2", api.mem_alloc_host) &&
      resolve("cuMemFreeHost", api.mem_free_host) &&
      resolve("cuMemcpyHtoDAsync_v2", api.memcpy_htod_async) &&
      resolve("cuMemcpyDtoHAsync_v2", api.memcpy_dtoh_async) &&
      resolve("cuMemcpyDtoDAsync_v2", api.memcpy_dtod_async) &&
      resolve("cuMemsetD8Async", api.memset_d8_async) &&
      resolve("cuStreamCreate", api.stream_create) &&
      resolve("cuStreamDestroy_v2", api.stream_destroy) &&
      resolve("cuStreamSynchronize", api.stream_synchronize) &&
      resolve("cuStreamWaitEvent", api.stream_wait_event) &&
      resolve("cuEventCreate", api.event_create) &&
      resolve("cuEventDestroy_v2", api.event_destroy) &&
      resolve("cuEventRecord", api.event_record) && resolve("cuEventQuery", api.event_query) &&
      resolve("cuEventSynchronize", api.event_synchronize) &&
      // Drivers before CUDA 12.8 have only the first version, which 13.0 keeps.
      (resolve("cuEventElapsedTime_v2", api.event_elapsed_time) ||
       resolve("cuEventElapsedTime", api.event_elapsed_time));
  if (!all && why != nullptr) *why = failure + " (too old?)";
  return all;
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
  std::string failure;
  void* library = support::load_library({path.c_str()}, failure);
  if (library == nullptr) {
    if (why != nullptr) *why = failure;
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
