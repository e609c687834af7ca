// Devices: logical CPU devices and CUDA GPUs.
#include "lazuli/device.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstdlib>
#include <exception>
#include <mutex>

#include "frontend/evaluation.h"
#include "lazuli/error.h"
#include "runtime/cuda/device.h"
#include "runtime/cuda/driver.h"
#include "runtime/devices.h"
#include "support/hot_path.h"

namespace lz {
namespace {

static_assert(runtime::kMaxCpuDevices == 64, "Device::cpu checks the same bound");

// The calling thread's default device while a DeviceScope lasts, and the stream its launches
// go to (StreamScope).
thread_local std::optional<Device> thread_default_device;
thread_local int thread_stream = 0;

// The process's default device: LZ_DEVICE, read at the first use, until set_default_device.
std::atomic<Device> process_device{Device::cpu()};
std::atomic<bool> process_device_set{false};  // by set_default_device: LZ_DEVICE no longer counts
std::once_flag environment_read;
// Set once read_environment has run: every recorded op asks for the default device, and
// call_once itself costs thread-local stores and a call even when it has run.
std::atomic<bool> environment_was_read{false};
std::exception_ptr environment_error;  // written once, inside call_once

void read_environment() {
  const char* text = std::getenv("LZ_DEVICE");
  if (text != nullptr && text[0] != '\0') {
    try {
      const Device device = Device::parse(text);
      if (!process_device_set.load(std::memory_order_acquire)) {
        process_device.store(device, std::memory_order_relaxed);
      }
    } catch (const Error& error) {
      environment_error =
          std::make_exception_ptr(Error("LZ_DEVICE=" + std::string(text) + ": " + error.what()));
    }
  }
  environment_was_read.store(true, std::memory_order_release);
}

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

LZ_HOT_PATH Device default_device() {
  if (thread_default_device) return *thread_default_device;
  if (!process_device_set.load(std::memory_order_acquire)) {
    if (!environment_was_read.load(std::memory_order_acquire)) {
      std::call_once(environment_read, read_environment);
    }
    if (environment_error && !process_device_set.load(std::memory_order_acquire)) {
      std::rethrow_exception(environment_error);
    }
  }
  return process_device.load(std::memory_order_relaxed);
}

void set_default_device(Device device) {
  process_device.store(device, std::memory_order_relaxed);
  process_device_set.store(true, std::memory_order_release);
}

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
