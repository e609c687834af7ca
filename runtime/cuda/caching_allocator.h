// Device memory for CUDA buffers, cached for reuse: cuMemAlloc and cuMemFree synchronize the
// device and cost tens of microseconds, so a freed block goes back to a cache of its stream and
// the next allocation of its size class on that stream takes it at once.
//
// Stream-ordered reuse: a block freed on stream S may still be read by work queued on S, but any
// work S runs later comes after that, so handing the block to the next allocation on S is safe
// without waiting. Another stream would need an event; instead it never takes S's blocks, and
// when memory runs short every cached block is returned to the device, after waiting for the
// whole device to finish what it has queued (AllocatorBackend::quiesce): a cached block may
// still be read by work queued before it was freed. A block that other streams read is held
// back from S's cache until they have run those reads (the `reusable` test given to free), so
// that S never waits for another stream's work only to free memory.
//
// The allocator itself knows nothing of CUDA: it gets and returns memory through a Backend, so
// that its policy is tested on any machine (tests/runtime/cuda_allocator_test.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>

namespace lz::runtime::cuda {

/// Where the memory comes from: cuMemAlloc / cuMemFree on a GPU.
struct AllocatorBackend {
  /// Returns the address of `bytes` of fresh memory, or 0 when the device has none left.
  std::function<uint64_t(int64_t bytes)> allocate;
  /// Must not throw.
  std::function<void(uint64_t address, int64_t bytes)> release;
  /// Waits until no queued work can still read a cached block (the whole device is idle);
  /// called before cached blocks go back. Must not throw.
  std::function<void()> quiesce;
};

struct AllocatorStatistics {
  int64_t bytes_in_use = 0;  // handed out and not freed
  int64_t bytes_cached = 0;  // freed, kept for reuse
  int64_t peak_bytes_in_use = 0;
  int64_t allocations = 0;         // allocate() calls that succeeded
  int64_t reuses = 0;              // of those, served from the cache
  int64_t device_allocations = 0;  // backend.allocate calls that succeeded
  int64_t cache_flushes = 0;       // times every cached block went back to the device
};

class CachingAllocator {
 public:
  /// `limit()` bounds the bytes in use plus cached; it is asked at each allocation from the
  /// device, so that lz::set_memory_limit applies at once.
  CachingAllocator(AllocatorBackend backend, std::function<int64_t()> limit);
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  /// Block sizes: multiples of 512 bytes up to 1 MiB, of 2 MiB beyond (so that a block serves
  /// requests a little smaller than itself, as a reused buffer of a changing size needs).
  static int64_t size_class(int64_t bytes);

  /// A block of at least `bytes` for work on `stream`. Throws lz::Error naming `op`, the size,
  /// and what is in use and cached when neither the cache, the device nor the limit allows it.
  uint64_t allocate(int64_t bytes, int stream, const std::string& op);
  /// Returns a block from allocate(bytes, stream, ...) to `stream`'s cache; with `reusable`,
  /// once it answers true (asked by later allocations of the block's stream and size class
  /// only, so an allocation asks no more than the blocks it could take; it must not throw):
  /// work queued on other streams still reads the block until then. Meanwhile the block counts
  /// as cached.
  void free(uint64_t address, int64_t bytes, int stream, std::function<bool()> reusable = nullptr);
  /// Returns every cached block to the device.
  void release_cached();

  AllocatorStatistics statistics();

 private:
  struct Key {
    int stream;
    int64_t size;
    auto operator<=>(const Key&) const = default;
  };

  /// A freed block still read on other streams.
  struct HeldBack {
    uint64_t address;
    std::function<bool()> reusable;
  };

  /// A cached block of `key`, or a held-back one whose reads have run; 0 if none. Under mutex_.
  uint64_t take_cached_locked(const Key& key);
  uint64_t allocate_from_device(int64_t size);  // under mutex_
  void release_cached_locked();

  const AllocatorBackend backend_;
  const std::function<int64_t()> limit_;
  std::mutex mutex_;
  std::multimap<Key, uint64_t> cached_;     // guarded by mutex_
  std::multimap<Key, HeldBack> held_back_;  // guarded by mutex_; oldest first within a key
  AllocatorStatistics statistics_;          // guarded by mutex_
};

}  // namespace lz::runtime::cuda
