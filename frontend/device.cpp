// Devices: logical CPU devices until the CUDA backend lands.
#include "lazuli/device.h"

#include "lazuli/error.h"
#include "runtime/devices.h"

namespace lz {
namespace {

static_assert(runtime::kMaxCpuDevices == 64, "Device::cpu checks the same bound");

// The calling thread's default device; DeviceScope changes it.
thread_local Device thread_default_device = Device::cpu();

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

}  // namespace lz
