#include "memory/buffer.h"

#include "support/environment.h"
#include "support/statistics.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define LAZULI_ADDRESS_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LAZULI_ADDRESS_SANITIZER 1
#endif
#endif
#if defined(LAZULI_ADDRESS_SANITIZER)
#include <sanitizer/asan_interface.h>
#endif

namespace lz::memory {
namespace {

constexpr size_t kAlignment = 64;                    // a cache line, and enough for any vector load
constexpr size_t kLargeBytes = size_t{1} << 20;      // from here on, blocks are cached
constexpr size_t kLargeAlignment = size_t{2} << 20;  // a huge page
constexpr int64_t kMaxDefaultCacheBytes = int64_t{1} << 30;

// Under AddressSanitizer, the bytes of a block past the buffer's end and whole cached blocks
// are poisoned, so overflows and uses after destruction are still reported.
void poison(void* data, size_t bytes) {
#if defined(LAZULI_ADDRESS_SANITIZER)
  ASAN_POISON_MEMORY_REGION(data, bytes);
#else
  (void)data, (void)bytes;
#endif
}
void unpoison(void* data, size_t bytes) {
#if defined(LAZULI_ADDRESS_SANITIZER)
  ASAN_UNPOISON_MEMORY_REGION(data, bytes);
#else
  (void)data, (void)bytes;
#endif
}

bool is_large(size_t bytes) { return bytes >= kLargeBytes; }

/// The bytes actually allocated for a buffer of `bytes`: a multiple of the alignment (which
/// aligned_alloc needs), and never zero (so that it returns a pointer).
size_t block_bytes(size_t bytes) {
  const size_t alignment = is_large(bytes) ? kLargeAlignment : kAlignment;
  return std::max(alignment, (bytes + alignment - 1) / alignment * alignment);
}

int64_t default_cache_limit() {
  if (const auto bytes = support::integer_from_environment("LZ_BUFFER_CACHE_BYTES", 0))
    return *bytes;
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_bytes = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_bytes <= 0) return kMaxDefaultCacheBytes;
  return std::min(kMaxDefaultCacheBytes, static_cast<int64_t>(pages) * page_bytes / 4);
}

/// Freed blocks for reuse by the next allocation of exactly their size, under one limit.
///
/// Large blocks (1 MiB or more) are kept oldest first, and the oldest go back to the system when
/// a new one would exceed the limit. Smaller ones are kept by size, at most kMaxSmallBytes of
/// them: a training step frees and allocates the same few sizes at every step, and handing them
/// to malloc made it give the heap's top back to the system and fault it in again at the next
/// step, a tenth of the time of a small step.
class BlockCache {
 public:
  static constexpr size_t kMaxSmallBytes = size_t{64} << 20;
  // AddressSanitizer reports a use after free with the stack that freed, which only a block
  // given back to the system has; small ones are freed at once there, as nodes are.
#if defined(LAZULI_ADDRESS_SANITIZER)
  static constexpr bool kCachesSmallBlocks = false;
#else
  static constexpr bool kCachesSmallBlocks = true;
#endif

  BlockCache() : limit_(default_cache_limit()) {}

  /// A cached block of exactly `bytes`, or nullptr.
  void* take(size_t bytes) {
    if (cached_bytes() == 0) return nullptr;  // the common case of a program's first steps
    std::lock_guard lock(mutex_);
    void* data = is_large_block(bytes) ? take_large_locked(bytes) : take_small_locked(bytes);
    if (data != nullptr) {
      cached_bytes_.fetch_sub(bytes, std::memory_order_relaxed);
      unpoison(data, bytes);
    }
    return data;
  }

  /// Keeps `data` for reuse, or frees it when it does not fit under the limit. Never throws: it
  /// runs in ~Buffer.
  void keep(void* data, size_t bytes) noexcept {
    std::lock_guard lock(mutex_);
    if (!kept_locked(data, bytes)) {
      std::free(data);
      return;
    }
    poison(data, bytes);
    cached_bytes_.fetch_add(bytes, std::memory_order_relaxed);
  }

  /// Without the lock: read at every allocation.
  size_t cached_bytes() const { return cached_bytes_.load(std::memory_order_relaxed); }

  int64_t limit() {
    std::lock_guard lock(mutex_);
    return limit_;
  }

  void set_limit(int64_t limit) {
    std::lock_guard lock(mutex_);
    limit_ = limit < 0 ? default_cache_limit() : limit;
    trim_locked(limit_);
  }

  void release_all() {
    std::lock_guard lock(mutex_);
    trim_locked(0);
  }

 private:
  struct Block {
    void* data;
    size_t bytes;
  };

  /// Blocks from kLargeBytes on take multiples of kLargeAlignment; smaller ones are smaller.
  static bool is_large_block(size_t bytes) { return bytes >= kLargeAlignment; }

  /// Files `data` with the cached blocks; false when it is not to be kept.
  bool kept_locked(void* data, size_t bytes) noexcept {
    if (static_cast<int64_t>(bytes) > limit_) return false;
    try {
      if (is_large_block(bytes)) {
        trim_locked(limit_ - static_cast<int64_t>(bytes));
        large_.push_back({data, bytes});
        return true;
      }
      if (!kCachesSmallBlocks || small_bytes_ + bytes > kMaxSmallBytes ||
          static_cast<int64_t>(cached_bytes() + bytes) > limit_) {
        return false;
      }
      small_[bytes].push_back(data);
      small_bytes_ += bytes;
      return true;
    } catch (const std::bad_alloc&) {  // no room to remember it: it goes back to the system
      return false;
    }
  }

  void* take_large_locked(size_t bytes) {
    // The most recently freed first: its pages are the likeliest to still be in the caches.
    for (auto it = large_.rbegin(); it != large_.rend(); ++it) {
      if (it->bytes != bytes) continue;
      void* data = it->data;
      large_.erase(std::next(it).base());
      return data;
    }
    return nullptr;
  }

  void* take_small_locked(size_t bytes) {
    const auto found = small_.find(bytes);
    if (found == small_.end()) return nullptr;
    void* data = found->second.back();
    found->second.pop_back();
    if (found->second.empty()) small_.erase(found);
    small_bytes_ -= bytes;
    return data;
  }

  /// Frees the oldest large blocks, then small ones, until at most `bytes` are cached.
  void trim_locked(int64_t bytes) {
    const auto over = [&] { return static_cast<int64_t>(cached_bytes()) > bytes; };
    size_t freed = 0;
    for (; freed < large_.size() && over(); ++freed) free_locked(large_[freed]);
    large_.erase(large_.begin(), large_.begin() + static_cast<std::ptrdiff_t>(freed));
    while (!small_.empty() && over()) {
      const auto sized = small_.begin();
      for (void* data : sized->second) free_locked({data, sized->first});
      small_bytes_ -= sized->first * sized->second.size();
      small_.erase(sized);
    }
  }

  void free_locked(Block block) {
    unpoison(block.data, block.bytes);
    std::free(block.data);
    cached_bytes_.fetch_sub(block.bytes, std::memory_order_relaxed);
  }

  std::mutex mutex_;
  std::vector<Block> large_;  // at most limit / 2 MiB of them: a linear search is cheap
  std::unordered_map<size_t, std::vector<void*>> small_;  // by size, most recently freed last
  size_t small_bytes_ = 0;
  std::atomic<size_t> cached_bytes_{0};  // large and small; changed under mutex_
  int64_t limit_;
};

// Never destroyed: buffers held by static objects may be destroyed after any static cache.
BlockCache& block_cache() {
  static BlockCache* const instance = new BlockCache;
  return *instance;
}

void* allocate_large_block(size_t bytes) {
  if (void* reused = block_cache().take(bytes)) return reused;
  void* data = std::aligned_alloc(kLargeAlignment, bytes);
  if (data == nullptr) {
    // The cache may hold the memory this allocation needs.
    block_cache().release_all();
    data = std::aligned_alloc(kLargeAlignment, bytes);
    if (data == nullptr) return nullptr;
  }
  // Transparent huge pages: one fault per 2 MiB instead of per 4 KiB where the system allows
  // them on request; an error (no THP support) changes nothing.
  (void)::madvise(data, bytes, MADV_HUGEPAGE);
  return data;
}

void* allocate_small_block(size_t bytes) {
  if (void* reused = block_cache().take(bytes)) return reused;
  return std::aligned_alloc(kAlignment, bytes);
}

int64_t default_memory_limit() {
  const auto bytes = support::integer_from_environment("LZ_MEMORY_LIMIT", 0);
  if (bytes && *bytes > 0) return *bytes;  // 0: the default
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_bytes = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_bytes <= 0) return INT64_MAX;
  return static_cast<int64_t>(pages) * page_bytes / 10 * 8;
}

// 0 until first read; then the limit in bytes.
std::atomic<int64_t> configured_memory_limit{0};
std::atomic<int64_t>& live_buffer_bytes() { return support::counters().bytes_in_use; }
// The most bytes alive at once since Buffer::restart_peak_live_bytes().
std::atomic<int64_t> window_peak_bytes{0};

/// Counts `bytes` as alive, or throws std::bad_alloc when that would exceed the memory limit.
void reserve_live_bytes(size_t bytes) {
  const int64_t limit = Buffer::memory_limit();
  const int64_t wanted = static_cast<int64_t>(bytes);
  const int64_t live = live_buffer_bytes().fetch_add(wanted, std::memory_order_relaxed) + wanted;
  if (live > limit) {
    live_buffer_bytes().fetch_sub(wanted, std::memory_order_relaxed);
    throw std::bad_alloc();
  }
  support::raise_to(support::counters().peak_bytes_in_use, live);
  support::raise_to(window_peak_bytes, live);
  // Free blocks kept for reuse count against the system's memory, not the limit; give them back
  // before buffers alive and cached together could exceed it.
  if (live_buffer_bytes().load(std::memory_order_relaxed) +
          static_cast<int64_t>(block_cache().cached_bytes()) >
      limit) {
    block_cache().release_all();
  }
}

}  // namespace

int64_t Buffer::memory_limit() {
  int64_t limit = configured_memory_limit.load(std::memory_order_relaxed);
  if (limit == 0) {
    limit = default_memory_limit();
    configured_memory_limit.store(limit, std::memory_order_relaxed);
  }
  return limit;
}

void Buffer::set_memory_limit(int64_t bytes) {
  configured_memory_limit.store(bytes > 0 ? bytes : default_memory_limit(),
                                std::memory_order_relaxed);
}

int64_t Buffer::live_bytes() { return live_buffer_bytes().load(std::memory_order_relaxed); }

void Buffer::restart_peak_live_bytes() {
  window_peak_bytes.store(live_buffer_bytes().load(std::memory_order_relaxed),
                          std::memory_order_relaxed);
}

int64_t Buffer::peak_live_bytes() { return window_peak_bytes.load(std::memory_order_relaxed); }

std::shared_ptr<Buffer> Buffer::allocate(DType dtype, int64_t size) {
  size_t bytes = 0;
  if (size < 0 || __builtin_mul_overflow(static_cast<size_t>(size), dtype_size(dtype), &bytes) ||
      bytes > (size_t{1} << 62)) {
    throw std::bad_alloc();
  }
  reserve_live_bytes(bytes);
  const size_t allocated = block_bytes(bytes);
  void* data = is_large(bytes) ? allocate_large_block(allocated) : allocate_small_block(allocated);
  if (data == nullptr) {
    live_buffer_bytes().fetch_sub(static_cast<int64_t>(bytes), std::memory_order_relaxed);
    throw std::bad_alloc();
  }
  poison(static_cast<char*>(data) + bytes, allocated - bytes);
  support::counters().bytes_allocated.fetch_add(static_cast<int64_t>(bytes),
                                                std::memory_order_relaxed);
  return std::shared_ptr<Buffer>(new Buffer(dtype, size, data));
}

std::shared_ptr<Buffer> Buffer::borrow(DType dtype, int64_t size, const void* data,
                                       std::function<void()> release) {
  std::shared_ptr<Buffer> buffer(new Buffer(dtype, size, const_cast<void*>(data)));
  buffer->release_ = release ? std::move(release) : [] {};
  return buffer;
}

std::shared_ptr<Buffer> Buffer::promise(DType dtype, int64_t size, std::shared_ptr<Event> written) {
  std::shared_ptr<Buffer> buffer(new Buffer(dtype, size, nullptr));
  buffer->written_ = std::move(written);
  return buffer;
}

void Buffer::fulfil(std::shared_ptr<Buffer> computed) {
  data_ = computed->data_;
  storage_ = std::move(computed);
}

void Buffer::fail(std::exception_ptr error) { error_ = std::move(error); }

std::shared_ptr<Buffer> Buffer::on_device(DType dtype, int64_t size,
                                          std::unique_ptr<DeviceMemory> memory) {
  std::shared_ptr<Buffer> buffer(new Buffer(dtype, size, nullptr));
  buffer->device_memory_ = std::move(memory);
  return buffer;
}

bool Buffer::is_computed() const {
  if (!is_ready()) return false;
  const DeviceMemory* memory = error_ == nullptr ? device_memory() : nullptr;
  return memory == nullptr || memory->is_written();
}

const DeviceMemory* Buffer::device_memory() const {
  return storage_ != nullptr ? storage_->device_memory() : device_memory_.get();
}

const Buffer& Buffer::host() const {
  if (storage_ != nullptr) return storage_->host();
  if (device_memory_ == nullptr) return *this;
  std::call_once(host_copy_made_, [this] {
    std::shared_ptr<Buffer> copy = allocate(dtype_, size_);
    device_memory_->copy_to_host(copy->data(), bytes());
    host_copy_ = std::move(copy);
  });
  return *host_copy_;
}

const DeviceMemory& Buffer::device_copy(int device, const DeviceCopier& copy) const {
  if (storage_ != nullptr) return storage_->device_copy(device, copy);
  std::lock_guard lock(device_copies_mutex_);
  for (const std::unique_ptr<DeviceMemory>& made : device_copies_) {
    if (made->device_index() == device) return *made;
  }
  return *device_copies_.emplace_back(copy(host()));
}

std::shared_ptr<Buffer> Buffer::exclusive_storage(const std::shared_ptr<Buffer>& buffer) {
  if (buffer.use_count() != 1 || !buffer->is_ready() || buffer->error_ != nullptr) return nullptr;
  const std::shared_ptr<Buffer>& storage = buffer->storage_ ? buffer->storage_ : buffer;
  if (storage != buffer && (storage.use_count() != 1 || storage->storage_ != nullptr)) {
    return nullptr;
  }
  if (storage->data_ == nullptr || storage->release_ || storage->device_memory_ != nullptr) {
    return nullptr;
  }
  std::lock_guard lock(storage->device_copies_mutex_);
  if (!storage->device_copies_.empty()) return nullptr;
  return storage;
}

Buffer::~Buffer() {
  if (release_) {
    try {
      release_();
    } catch (const std::exception& error) {  // a destructor cannot pass it on
      std::fprintf(stderr, "[lazuli] the release callback of borrowed memory threw: %s\n",
                   error.what());
    } catch (...) {
      std::fprintf(stderr, "[lazuli] the release callback of borrowed memory threw\n");
    }
    return;
  }
  if (written_ != nullptr) return;        // a promise: its memory, if any, is `storage_`'s
  if (device_memory_ != nullptr) return;  // the device's allocator takes it back
  const auto bytes = static_cast<size_t>(this->bytes());
  live_buffer_bytes().fetch_sub(static_cast<int64_t>(bytes), std::memory_order_relaxed);
  const size_t allocated = block_bytes(bytes);
  unpoison(data_, allocated);
  block_cache().keep(data_, allocated);
}

int64_t Buffer::cache_limit_bytes() { return block_cache().limit(); }

void Buffer::set_cache_limit_bytes(int64_t bytes) { block_cache().set_limit(bytes); }

int64_t Buffer::cached_bytes() { return static_cast<int64_t>(block_cache().cached_bytes()); }

void Buffer::release_cached_memory() { block_cache().release_all(); }

}  // namespace lz::memory
