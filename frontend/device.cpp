// Devices: logical CPU devices and CUDA GPUs.
#include "lazuli/device.h"

#include <algorithm>

#include "frontend/evaluation.h"
#include "lazuli/error.h"
#include "runtime/cuda/driver.h"
#include "runtime/devices.h"

namespace lz {
namespace {

static_assert(runtime::kMaxCpuDevices == 64, "Device::cpu checks the same bound");

// The calling thread's default device and the stream its launches go to; DeviceScope and
// StreamScope change them.
thread_local Device thread_default_device = Device::cpu();
thread_local int thread_stream = 0;

}  // namespace

void Device::fail_invalid_cpu_index(int index) {
  throw Error("[Device::cpu] index " + std::to_string(index) + " is out of range; logical CPU " +
              "devices are numbered 0.." + std::to_string(kMaxCpuIndex - 1));
}

Device Device::cuda(int index) {
  std::string why;
  const runtime::cuda::Driver* driver = runtime::cuda::driver(&why);
  if (driver == nullptr) {
    throw Error("[Device::cuda] no CUDA device: " + why +
                ". Use lz::Device::cpu(), or ask lz::cuda::is_available() first");
  }
  const int usable = std::min(driver->device_count, runtime::kMaxCudaDevices);
  if (index < 0 || index >= usable) {
    throw Error("[Device::cuda] device " + std::to_string(index) + " does not exist; lazuli " +
                "uses CUDA devices 0.." + std::to_string(usable - 1) + " of this machine");
  }
  return Device(Kind::Cuda, index);
}

std::string Device::name() const {
  return (kind_ == Kind::Cpu ? "cpu:" : "cuda:") + std::to_string(index_);
}

Device default_device() { return thread_default_device; }

DeviceScope::DeviceScope(Device device) : previous_(thread_default_device) {
  thread_default_device = device;
}

DeviceScope::~DeviceScope() { thread_default_device = previous_; }

StreamScope::StreamScope(int index) : previous_(thread_stream) {
  if (index < 0 || index >= runtime::kStreamsPerDevice) {
    throw Error("[StreamScope] stream " + std::to_string(index) +
                " is out of range; each device has streams 0.." +
                std::to_string(runtime::kStreamsPerDevice - 1));
  }
  thread_stream = index;
}

StreamScope::~StreamScope() { thread_stream = previous_; }

int frontend::current_stream() { return thread_stream; }

bool cuda::is_available() { return runtime::cuda::driver() != nullptr; }

int cuda::device_count() {
  const runtime::cuda::Driver* driver = runtime::cuda::driver();
  return driver == nullptr ? 0 : driver->device_count;
}

std::string cuda::unavailable_reason() {
  std::string why;
  runtime::cuda::driver(&why);
  return why;
}

}  // namespace lz
