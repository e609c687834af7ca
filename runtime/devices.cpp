#include "runtime/devices.h"

#include <array>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <string>

namespace lz::runtime {
namespace {

// Streams are created on first use and never destroyed: a static tensor's buffer, or work
// queued when main returns, may still need them while static objects are being destroyed.
std::array<std::atomic<Stream*>, kMaxCpuDevices> cpu_streams{};
std::mutex creation_mutex;

void finish_queued_work_at_exit() { synchronize_all_streams(); }

}  // namespace

Stream& cpu_stream(int index) {
  Stream* stream = cpu_streams[index].load(std::memory_order_acquire);
  if (stream != nullptr) return *stream;
  std::lock_guard lock(creation_mutex);
  stream = cpu_streams[index].load(std::memory_order_relaxed);
  if (stream == nullptr) {
    static const bool registered = std::atexit(finish_queued_work_at_exit) == 0;
    (void)registered;
    stream = new Stream("stream cpu:" + std::to_string(index));
    cpu_streams[index].store(stream, std::memory_order_release);
  }
  return *stream;
}

void synchronize_all_streams() {
  for (const std::atomic<Stream*>& slot : cpu_streams) {
    if (Stream* stream = slot.load(std::memory_order_acquire)) stream->synchronize();
  }
}

}  // namespace lz::runtime
