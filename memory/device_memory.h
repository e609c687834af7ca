// Memory of an accelerator holding a buffer's elements (runtime/cuda/ implements it): the buffer
// owns it, and a blocking point that reads the buffer copies it to the host.
#pragma once

#include <cstdint>

namespace lz::memory {

class DeviceMemory {
 public:
  virtual ~DeviceMemory() = default;  // gives the memory back to its device's allocator
  /// The device address kernels read and write.
  virtual uint64_t address() const = 0;
  /// Which device ("cuda:0"), as CUDA devices are numbered.
  virtual int device_index() const = 0;
  /// Copies the first `bytes` to `host`, after the work queued to write them. Throws lz::Error
  /// when the device reports a failure.
  virtual void copy_to_host(void* host, int64_t bytes) const = 0;
  /// Blocks until the work queued to write the memory has run (launches on a device are only
  /// queued). Throws lz::Error when the device reports a failure.
  virtual void wait() const = 0;
  /// Whether the work queued to write the memory has run (or failed: a read then reports it);
  /// never blocks.
  virtual bool is_written() const = 0;
};

}  // namespace lz::memory
