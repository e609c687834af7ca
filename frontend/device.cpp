// Devices: only the host CPU until the CUDA backend lands.
#include "lazuli/device.h"

namespace lz {

std::string Device::name() const { return "cpu"; }

Device default_device() { return Device::cpu(); }

}  // namespace lz
