// The Device value type: its name and the bound on logical CPU devices. Which devices exist (the
// CUDA driver's count, Device::cuda and Device::parse) is the frontend's to ask the runtime.
#include "lazuli/device.h"

#include "lazuli/error.h"

namespace lz {

void Device::fail_invalid_cpu_index(int index) {
  throw Error("[Device::cpu] index " + std::to_string(index) + " is out of range; logical CPU " +
              "devices are numbered 0.." + std::to_string(kMaxCpuIndex - 1));
}

std::string Device::name() const {
  return (kind_ == Kind::Cpu ? "cpu:" : "cuda:") + std::to_string(index_);
}

}  // namespace lz
