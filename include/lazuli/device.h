// Where a tensor lives and runs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace lz {

/// A compute device: a logical CPU device, or a CUDA GPU.
///
/// The host CPU can be opened as several logical devices, cpu(0), cpu(1), ...: each has its own
/// streams (worker threads that each run their kernels in order; lz::StreamScope picks one), so
/// work recorded on different devices runs concurrently, and a program written for several devices
/// can be run and tested on one CPU. They share the host's memory and its thread pool.
class Device {
 public:
  enum class Kind { Cpu, Cuda };

  /// Logical CPU device `index` (0 <= index < 64); cpu() is cpu(0), the default.
  static Device cpu(int index = 0) {
    if (index < 0 || index >= kMaxCpuIndex) fail_invalid_cpu_index(index);
    return Device(Kind::Cpu, index);
  }
  /// CUDA device `index`. Throws lz::Error saying why when there is no such device (no driver,
  /// no GPU, index out of range); lz::cuda::is_available() asks without throwing.
  static Device cuda(int index = 0);
  /// The device a name denotes: "cpu", "cpu:N", "cuda" (cuda:0) or "cuda:N", as name() writes
  /// them. Throws lz::Error for anything else, and as cpu() and cuda() do.
  static Device parse(std::string_view text);

  Kind kind() const { return kind_; }
  int index() const { return index_; }
  /// "cpu:0", "cpu:1", ..., "cuda:0", ...
  std::string name() const;

  friend bool operator==(const Device&, const Device&) = default;

 private:
  static constexpr int kMaxCpuIndex = 64;
  [[noreturn]] static void fail_invalid_cpu_index(int index);
  Device(Kind kind, int index) : kind_(kind), index_(index) {}
  Kind kind_;
  int index_;
};

/// The device new tensors are created on when none is given: the calling thread's, set by
/// DeviceScope, else the process's (LZ_DEVICE, set_default_device), else cpu(0). Ops on tensors
/// run on their inputs' device. Throws lz::Error when LZ_DEVICE names no usable device.
Device default_device();

/// Makes `device` the process's default device (what LZ_DEVICE sets at start-up); a thread's
/// DeviceScope still wins on that thread.
void set_default_device(Device device);

/// Makes `device` the calling thread's default device until the scope ends (scopes nest).
class DeviceScope {
 public:
  explicit DeviceScope(Device device);
  ~DeviceScope();
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  std::optional<Device> previous_;
};

/// Sends the calling thread's launches to stream `index` (0 <= index < 8) of each device until
/// the scope ends (scopes nest). Each device has several streams; work on one stream runs in
/// order, streams run concurrently, and work that reads another stream's results waits for them.
/// Stream 0 is the default.
class StreamScope {
 public:
  explicit StreamScope(int index);
  ~StreamScope();
  StreamScope(const StreamScope&) = delete;
  StreamScope& operator=(const StreamScope&) = delete;

 private:
  int previous_;
};

namespace cuda {

/// Whether a CUDA device can be used: the driver (libcuda.so.1, loaded at first call) is present
/// and finds at least one GPU. Never throws.
bool is_available();
/// The number of CUDA devices (0 when none is available).
int device_count();
/// Why no CUDA device is available ("cannot load libcuda.so.1: ..."); empty when one is.
std::string unavailable_reason();

/// What the caching allocator of a CUDA device holds and has done (counts since the device was
/// first used). Freed blocks stay cached for reuse by later work on the same stream.
struct MemoryStats {
  int64_t bytes_in_use = 0;  // held by live tensors and queued work
  int64_t bytes_cached = 0;  // freed, kept for reuse
  int64_t peak_bytes_in_use = 0;
  int64_t allocations = 0;         // blocks handed out
  int64_t reuses = 0;              // of those, taken from the cache
  int64_t device_allocations = 0;  // of those, new memory from the driver (cuMemAlloc)
  int64_t cache_flushes = 0;       // times the whole cache went back to the driver
};
/// The allocator's figures for CUDA device `index`. Throws as Device::cuda(index) does.
MemoryStats memory_stats(int index = 0);
/// Gives the cached blocks of CUDA device `index` back to the driver, once the device has run
/// what it has queued (for other processes, or before measuring). Throws as Device::cuda does.
void empty_cache(int index = 0);

}  // namespace cuda
}  // namespace lz
