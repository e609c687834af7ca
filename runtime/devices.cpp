#include "runtime/devices.h"

#include <array>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <span>
#include <string>

namespace lz::runtime {
namespace {

// Streams are created on first use and never destroyed: a static tensor's buffer, or work
// queued when main returns, may still need them while static objects are being destroyed.
std::array<std::atomic<Stream*>, kMaxCpuDevices * kStreamsPerDevice> cpu_streams{};
// The host threads that queue work on CUDA devices, one per device stream (runtime/cuda/).
std::array<std::atomic<Stream*>, kMaxCudaDevices * kStreamsPerDevice> cuda_streams{};
std::atomic<Stream*> callbacks{nullptr};
std::mutex creation_mutex;

void finish_queued_work_at_exit() { synchronize_all_streams(); }

}  // namespace

Stream& device_stream(Device device, int stream) {
  std::atomic<Stream*>* slots =
      device.kind() == Device::Kind::Cpu ? cpu_streams.data() : cuda_streams.data();
  std::atomic<Stream*>& slot = slots[device.index() * kStreamsPerDevice + stream];
  Stream* existing = slot.load(std::memory_order_acquire);
  if (existing != nullptr) return *existing;
  std::lock_guard lock(creation_mutex);
  existing = slot.load(std::memory_order_relaxed);
  if (existing == nullptr) {
    static const bool registered = std::atexit(finish_queued_work_at_exit) == 0;
    (void)registered;
    existing = new Stream("stream " + device.name() + "/" + std::to_string(stream));
    slot.store(existing, std::memory_order_release);
  }
  return *existing;
}

Stream& cpu_stream(int device, int stream) { return device_stream(Device::cpu(device), stream); }

Stream& callback_stream() {
  Stream* existing = callbacks.load(std::memory_order_acquire);
  if (existing != nullptr) return *existing;
  std::lock_guard lock(creation_mutex);
  existing = callbacks.load(std::memory_order_relaxed);
  if (existing == nullptr) {
    existing = new Stream("callbacks");
    callbacks.store(existing, std::memory_order_release);
  }
  return *existing;
}

void reregister_exit_drain() { std::atexit(finish_queued_work_at_exit); }

void synchronize_all_streams() {
  const auto synchronize = [](std::span<const std::atomic<Stream*>> slots) {
    for (const std::atomic<Stream*>& slot : slots) {
      if (Stream* stream = slot.load(std::memory_order_acquire)) stream->synchronize();
    }
  };
  synchronize(cpu_streams);
  synchronize(cuda_streams);
  // From a callback (which may call waitall) this returns at once: see Stream::synchronize.
  if (Stream* queued_callbacks = callbacks.load(std::memory_order_acquire)) {
    queued_callbacks->synchronize();
  }
}

}  // namespace lz::runtime
