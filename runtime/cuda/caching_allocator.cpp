#include "runtime/cuda/caching_allocator.h"

#include <algorithm>

#include "lazuli/error.h"

namespace lz::runtime::cuda {
namespace {

constexpr int64_t kSmallGranule = 512;
constexpr int64_t kLargeThreshold = int64_t{1} << 20;
constexpr int64_t kLargeGranule = int64_t{2} << 20;

int64_t round_up(int64_t value, int64_t granule) {
  return (value + granule - 1) / granule * granule;
}

std::string mib(int64_t bytes) { return std::to_string(bytes / (1 << 20)) + " MiB"; }

}  // namespace

CachingAllocator::CachingAllocator(AllocatorBackend backend, std::function<int64_t()> limit)
    : backend_(std::move(backend)), limit_(std::move(limit)) {}

CachingAllocator::~CachingAllocator() { release_cached(); }

int64_t CachingAllocator::size_class(int64_t bytes) {
  bytes = std::max<int64_t>(bytes, 1);
  return bytes <= kLargeThreshold ? round_up(bytes, kSmallGranule) : round_up(bytes, kLargeGranule);
}

uint64_t CachingAllocator::allocate(int64_t bytes, int stream, const std::string& op) {
  const int64_t size = size_class(bytes);
  std::lock_guard lock(mutex_);
  uint64_t address = take_cached_locked({stream, size});
  if (address != 0) {
    statistics_.bytes_cached -= size;
    ++statistics_.reuses;
  } else {
    const int64_t limit = limit_();
    // Cached blocks count against the limit: give them back before refusing.
    if (statistics_.bytes_in_use + statistics_.bytes_cached + size > limit) release_cached_locked();
    if (statistics_.bytes_in_use + size > limit) {
      throw Error("[" + op + "] cannot allocate " + std::to_string(bytes) + " bytes on the GPU: " +
                  mib(statistics_.bytes_in_use) + " in use, and the memory limit is " + mib(limit) +
                  " (lz::set_memory_limit, LZ_MEMORY_LIMIT)");
    }
    address = allocate_from_device(size);
    if (address == 0) {
      throw Error("[" + op + "] the GPU is out of memory allocating " + std::to_string(bytes) +
                  " bytes; lazuli holds " + mib(statistics_.bytes_in_use) +
                  " in use and nothing cached");
    }
  }
  statistics_.bytes_in_use += size;
  statistics_.peak_bytes_in_use = std::max(statistics_.peak_bytes_in_use, statistics_.bytes_in_use);
  ++statistics_.allocations;
  return address;
}

uint64_t CachingAllocator::take_cached_locked(const Key& key) {
  if (auto found = cached_.find(key); found != cached_.end()) {
    const uint64_t address = found->second;
    cached_.erase(found);
    return address;
  }
  auto [first, last] = held_back_.equal_range(key);
  for (auto block = first; block != last; ++block) {
    if (!block->second.reusable()) continue;
    const uint64_t address = block->second.address;
    held_back_.erase(block);
    return address;
  }
  return 0;
}

uint64_t CachingAllocator::allocate_from_device(int64_t size) {
  uint64_t address = backend_.allocate(size);
  if (address == 0 && statistics_.bytes_cached > 0) {
    release_cached_locked();  // memory other streams cached, or other size classes
    address = backend_.allocate(size);
  }
  if (address != 0) ++statistics_.device_allocations;
  return address;
}

void CachingAllocator::free(uint64_t address, int64_t bytes, int stream,
                            std::function<bool()> reusable) {
  const int64_t size = size_class(bytes);
  std::lock_guard lock(mutex_);
  if (reusable != nullptr) {
    held_back_.emplace(Key{stream, size}, HeldBack{address, std::move(reusable)});
  } else {
    cached_.emplace(Key{stream, size}, address);
  }
  statistics_.bytes_in_use -= size;
  statistics_.bytes_cached += size;
}

void CachingAllocator::release_cached() {
  std::lock_guard lock(mutex_);
  release_cached_locked();
}

void CachingAllocator::release_cached_locked() {
  if (cached_.empty() && held_back_.empty()) return;
  backend_.quiesce();  // after which no stream reads a held-back block either
  for (const auto& [key, block] : held_back_) cached_.emplace(key, block.address);
  held_back_.clear();
  while (!cached_.empty()) {
    const auto node = cached_.extract(cached_.begin());  // out of the cache before it is freed
    statistics_.bytes_cached -= node.key().size;
    backend_.release(node.mapped(), node.key().size);
  }
  ++statistics_.cache_flushes;
}

AllocatorStatistics CachingAllocator::statistics() {
  std::lock_guard lock(mutex_);
  return statistics_;
}

}  // namespace lz::runtime::cuda
