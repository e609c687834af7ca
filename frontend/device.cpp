// Devices: logical CPU devices until the CUDA backend lands.
#include "lazuli/device.h"

#include "frontend/evaluation.h"
#include "lazuli/error.h"
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

std::string Device::name() const { return "cpu:" + std::to_string(index_); }

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

}  // namespace lz
