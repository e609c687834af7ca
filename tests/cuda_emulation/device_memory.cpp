#include "tests/cuda_emulation/device_memory.h"

#include <stdlib.h>

#include <cstdlib>
#include <cstring>

namespace lz::cuda_emulation {
namespace {

constexpr size_t kAlignment = 256;  // what cuMemAlloc guarantees, and the generated code assumes
constexpr unsigned char kFreshByte = 0xa5;
constexpr unsigned char kFreedByte = 0xdd;

size_t rounded(size_t bytes) { return (bytes + kAlignment - 1) / kAlignment * kAlignment; }

}  // namespace

CUresult DeviceMemory::allocate(int device, size_t bytes, CUdeviceptr& address) {
  const size_t size = rounded(bytes);
  {
    std::lock_guard lock(mutex_);
    if (size > kDeviceMemoryBytes - bytes_in_use_[device]) return kErrorOutOfMemory;
    bytes_in_use_[device] += size;
  }
  // The bytes asked for, no more: in a sanitized build an access past them shows.
  void* memory = nullptr;
  if (posix_memalign(&memory, kAlignment, bytes) != 0) {
    std::lock_guard lock(mutex_);
    bytes_in_use_[device] -= size;
    return kErrorOutOfMemory;
  }
  std::memset(memory, kFreshByte, bytes);
  std::lock_guard lock(mutex_);
  device_.emplace(reinterpret_cast<uintptr_t>(memory), Allocation{bytes, size, device});
  address = reinterpret_cast<uintptr_t>(memory);
  return kSuccess;
}

bool DeviceMemory::free(CUdeviceptr address) {
  size_t bytes = 0;
  {
    std::lock_guard lock(mutex_);
    const auto found = device_.find(static_cast<uintptr_t>(address));
    if (found == device_.end()) return false;
    bytes = found->second.bytes;
    bytes_in_use_[found->second.device] -= found->second.size;
    device_.erase(found);
  }
  void* memory = reinterpret_cast<void*>(static_cast<uintptr_t>(address));
  std::memset(memory, kFreedByte, bytes);
  std::free(memory);
  return true;
}

int DeviceMemory::device_of(CUdeviceptr address) {
  std::lock_guard lock(mutex_);
  const auto found = device_.find(static_cast<uintptr_t>(address));
  return found == device_.end() ? -1 : found->second.device;
}

std::map<uintptr_t, DeviceMemory::Allocation>::const_iterator DeviceMemory::holding(
    const std::map<uintptr_t, Allocation>& allocations, uintptr_t address, size_t bytes) {
  auto found = allocations.upper_bound(address);
  if (found == allocations.begin()) return allocations.end();
  --found;
  const uintptr_t offset = address - found->first;
  if (offset > found->second.bytes || bytes > found->second.bytes - offset) {
    return allocations.end();
  }
  return found;
}

int DeviceMemory::device_holding(CUdeviceptr address, size_t bytes) {
  std::lock_guard lock(mutex_);
  const auto found = holding(device_, static_cast<uintptr_t>(address), bytes);
  return found != device_.end() ? found->second.device : -1;
}

bool DeviceMemory::overlaps(const void* host, size_t bytes) {
  const auto begin = reinterpret_cast<uintptr_t>(host);
  std::lock_guard lock(mutex_);
  auto next = device_.lower_bound(begin);
  if (next != device_.end() && next->first < begin + bytes) return true;
  if (next == device_.begin()) return false;
  --next;
  return next->first + next->second.bytes > begin;
}

CUresult DeviceMemory::allocate_host(size_t bytes, void*& host) {
  const size_t size = rounded(bytes);
  host = std::aligned_alloc(kAlignment, size);
  if (host == nullptr) return kErrorOutOfMemory;
  std::lock_guard lock(mutex_);
  page_locked_.emplace(reinterpret_cast<uintptr_t>(host), Allocation{bytes, size, -1});
  return kSuccess;
}

bool DeviceMemory::free_host(void* host) {
  {
    std::lock_guard lock(mutex_);
    if (page_locked_.erase(reinterpret_cast<uintptr_t>(host)) == 0) return false;
  }
  std::free(host);
  return true;
}

bool DeviceMemory::is_page_locked(const void* host, size_t bytes) {
  std::lock_guard lock(mutex_);
  return holding(page_locked_, reinterpret_cast<uintptr_t>(host), bytes) != page_locked_.end();
}

}  // namespace lz::cuda_emulation
