// The emulated devices' memory: host memory, 256-byte aligned, whose addresses are the device
// pointers, and page-locked host memory (cuMemAllocHost). Every allocation is tracked, so that a
// copy, memset or product over memory that is not (or no longer) allocated is reported instead
// of corrupting the process, and so that a device's memory runs out at its reported size.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>

#include "tests/cuda_emulation/driver.h"

namespace lz::cuda_emulation {

inline constexpr int kDeviceCount = 2;
/// What each device reports as its memory (cuDeviceTotalMem) and lets be allocated.
inline constexpr size_t kDeviceMemoryBytes = size_t{4} << 30;

class DeviceMemory {
 public:
  /// `bytes` of `device`'s memory, filled with a pattern no kernel should read back before
  /// writing; kErrorOutOfMemory beyond kDeviceMemoryBytes.
  CUresult allocate(int device, size_t bytes, CUdeviceptr& address);
  /// Frees what allocate returned at `address`: false when it returned no such address. The
  /// memory is overwritten first, so that a later read of it shows.
  bool free(CUdeviceptr address);
  /// The device `address` was allocated on, when it starts an allocation; else -1.
  int device_of(CUdeviceptr address);
  /// The device of the allocation holding [address, address + bytes), or -1 when none does.
  int device_holding(CUdeviceptr address, size_t bytes);
  /// Whether [host, host + bytes) overlaps a device allocation (host memory must not).
  bool overlaps(const void* host, size_t bytes);

  CUresult allocate_host(size_t bytes, void*& host);
  bool free_host(void* host);
  /// Whether [host, host + bytes) lies within one page-locked allocation.
  bool is_page_locked(const void* host, size_t bytes);

 private:
  struct Allocation {
    size_t bytes;  // asked for: what copies and kernels may use
    size_t size;   // allocated: rounded up to the alignment
    int device;
  };
  /// The allocation of `allocations` holding [address, address + bytes), or end().
  static std::map<uintptr_t, Allocation>::const_iterator holding(
      const std::map<uintptr_t, Allocation>& allocations, uintptr_t address, size_t bytes);

  std::mutex mutex_;
  std::map<uintptr_t, Allocation> device_;           // by address; guarded by mutex_
  std::map<uintptr_t, Allocation> page_locked_;      // guarded by mutex_
  std::array<size_t, kDeviceCount> bytes_in_use_{};  // guarded by mutex_
};

}  // namespace lz::cuda_emulation
