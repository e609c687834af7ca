// The default device and stream of new work: LZ_DEVICE, set_default_device, DeviceScope and
// StreamScope. Which devices exist is the runtime's (runtime/device_queries.cpp).
#include "lazuli/device.h"

#include <atomic>
#include <cstdlib>
#include <exception>
#include <mutex>

#include "frontend/evaluation.h"
#include "lazuli/error.h"
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

}  // namespace lz
