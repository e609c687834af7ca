#include "runtime/cuda/device.h"

#include <algorithm>
#include <atomic>

#include "lazuli/error.h"
#include "memory/buffer.h"

namespace lz::runtime::cuda {
namespace {

/// cuMemAlloc and cuMemFree behind the caching allocator; "no memory left" is a 0 address, any
/// other failure an error.
AllocatorBackend device_memory(const CudaDevice& device) {
  return {[&device](int64_t bytes) -> uint64_t {
            device.make_current();
            CUdeviceptr address = 0;
            const CUresult result =
                device.driver().api.mem_alloc(&address, static_cast<size_t>(bytes));
            if (result == kErrorOutOfMemory) return 0;
            check(device.driver(), result, "cuda", "cuMemAlloc");
            return address;
          },
          [&device](uint64_t address, int64_t) {
            // Never throws: at exit the context may be gone, and nothing is left to do then.
            (void)device.driver().api.ctx_set_current(device.context());
            (void)device.driver().api.mem_free(address);
          },
          [&device] {
            (void)device.driver().api.ctx_set_current(device.context());
            (void)device.driver().api.ctx_synchronize();
          }};
}

/// The devices opened so far, by ordinal.
std::array<std::atomic<CudaDevice*>, kMaxCudaDevices>& open_devices() {
  static std::array<std::atomic<CudaDevice*>, kMaxCudaDevices> devices{};
  return devices;
}

}  // namespace

CudaDevice::CudaDevice(const Driver& driver, int ordinal)
    : driver_(driver), ordinal_(ordinal), properties_(device_properties(ordinal)) {
  check(driver_, driver_.api.device_get(&device_, ordinal), "cuda", "cuDeviceGet");
  check(driver_, driver_.api.primary_ctx_retain(&context_, device_), "cuda",
        "cuDevicePrimaryCtxRetain");
  // The limit is lazuli's memory limit, within what the device has (a little is the driver's).
  const auto device_bytes = static_cast<int64_t>(properties_.memory_bytes);
  allocator_ = std::make_unique<CachingAllocator>(device_memory(*this), [device_bytes] {
    return std::min(memory::Buffer::memory_limit(), device_bytes / 10 * 9);
  });
}

void CudaDevice::make_current() const {
  check(driver_, driver_.api.ctx_set_current(context_), "cuda", "cuCtxSetCurrent");
}

CUstream CudaDevice::stream(int index) {
  make_current();  // whatever the caller does next with the stream needs the context
  std::lock_guard lock(mutex_);
  CUstream& stream = streams_.at(static_cast<size_t>(index));
  if (stream == nullptr) {
    check(driver_, driver_.api.stream_create(&stream, kStreamNonBlocking), "cuda",
          "cuStreamCreate");
  }
  return stream;
}

CUmodule CudaDevice::load_module(const void* image) {
  make_current();
  CUmodule module = nullptr;
  check(driver_, driver_.api.module_load_data(&module, image), "cuda", "cuModuleLoadData");
  return module;
}

CUfunction CudaDevice::function(CUmodule module, const std::string& symbol) {
  CUfunction function = nullptr;
  check(driver_, driver_.api.module_get_function(&function, module, symbol.c_str()), "cuda",
        ("cuModuleGetFunction(" + symbol + ")").c_str());
  return function;
}

void CudaDevice::launch(CUfunction function, unsigned grid, unsigned block, void** parameters,
                        CUstream stream, const char* op) {
  make_current();
  check(
      driver_,
      driver_.api.launch_kernel(function, grid, 1, 1, block, 1, 1, 0, stream, parameters, nullptr),
      op, "cuLaunchKernel");
}

void CudaDevice::synchronize(CUstream stream, const char* op) {
  make_current();
  check(driver_, driver_.api.stream_synchronize(stream), op, "cuStreamSynchronize");
}

CudaDevice& cuda_device(int ordinal) {
  static std::mutex creation_mutex;
  std::string why;
  const Driver* driver = cuda::driver(&why);
  if (driver == nullptr) throw Error("[cuda] no CUDA device: " + why);
  if (ordinal < 0 || ordinal >= std::min(driver->device_count, kMaxCudaDevices)) {
    throw Error("[cuda] device " + std::to_string(ordinal) + " does not exist; this machine has " +
                std::to_string(driver->device_count));
  }
  std::atomic<CudaDevice*>& slot = open_devices()[static_cast<size_t>(ordinal)];
  if (CudaDevice* existing = slot.load(std::memory_order_acquire)) return *existing;
  std::lock_guard lock(creation_mutex);
  CudaDevice* existing = slot.load(std::memory_order_relaxed);
  if (existing == nullptr) {
    // Never destroyed, like the CPU streams: work queued at exit may still use it.
    existing = new CudaDevice(*driver, ordinal);
    slot.store(existing, std::memory_order_release);
  }
  return *existing;
}

}  // namespace lz::runtime::cuda

namespace lz::runtime {

void synchronize_cuda_devices() {
  for (const std::atomic<cuda::CudaDevice*>& slot : cuda::open_devices()) {
    const cuda::CudaDevice* device = slot.load(std::memory_order_acquire);
    if (device == nullptr) continue;
    device->make_current();
    cuda::check(device->driver(), device->driver().api.ctx_synchronize(), "waitall",
                "cuCtxSynchronize");
  }
}

}  // namespace lz::runtime
