// Which devices exist: the public questions (Device::cuda, Device::parse, lz::cuda::...) that the
// runtime answers from the CUDA driver it loads and the devices it opens.
#include <algorithm>
#include <charconv>
#include <string>

#include "lazuli/device.h"
#include "lazuli/error.h"
#include "runtime/cuda/device.h"
#include "runtime/cuda/driver.h"
#include "runtime/devices.h"

namespace lz {

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

Device Device::parse(std::string_view text) {
  const size_t colon = text.find(':');
  const std::string_view kind = text.substr(0, colon);
  int index = 0;
  bool valid = kind == "cpu" || kind == "cuda";
  if (valid && colon != std::string_view::npos) {
    const std::string_view digits = text.substr(colon + 1);
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
    valid = !digits.empty() && error == std::errc() && end == digits.data() + digits.size();
  }
  if (!valid) {
    throw Error("[Device::parse] '" + std::string(text) +
                "' is not a device; expected cpu, cpu:N, cuda or cuda:N");
  }
  return kind == "cpu" ? cpu(index) : cuda(index);
}

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

cuda::MemoryStats cuda::memory_stats(int index) {
  const Device device = Device::cuda(index);  // throws, saying why, for no such device
  const runtime::cuda::AllocatorStatistics counts =
      runtime::cuda::cuda_device(device.index()).allocator().statistics();
  return {counts.bytes_in_use, counts.bytes_cached, counts.peak_bytes_in_use,
          counts.allocations,  counts.reuses,       counts.device_allocations,
          counts.cache_flushes};
}

void cuda::empty_cache(int index) {
  const Device device = Device::cuda(index);
  runtime::cuda::cuda_device(device.index()).allocator().release_cached();
}

}  // namespace lz
