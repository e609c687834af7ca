// Contiguous, row-major storage of one tensor's elements: on the host, or in a device's memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "lazuli/dtype.h"
#include "memory/device_memory.h"
#include "memory/event.h"

namespace lz::memory {

class Buffer {
 public:
  /// Uninitialized storage for `size` elements of `dtype`, 64-byte aligned. Storage of 1 MiB
  /// or more is 2 MiB aligned and may be the memory of a buffer destroyed earlier (see below).
  static std::shared_ptr<Buffer> allocate(DType dtype, int64_t size);

  // Buffers are recycled: the first touch of fresh memory costs a page fault per 4 KiB (tens of
  // milliseconds for 64 MB), and a program that evaluates in a loop allocates the same sizes
  // again and again. A destroyed buffer keeps its memory in a cache, by size (rounded up to 2 MiB
  // from 1 MiB on), for the next allocation of that size; blocks under 1 MiB take at most 64 MiB
  // of the cache.

  /// Bytes the cache may keep: LZ_BUFFER_CACHE_BYTES (0 turns it off), else min(1 GiB, RAM / 4).
  static int64_t cache_limit_bytes();
  /// Overrides the limit (tests, benchmarks), freeing the oldest blocks above it; a negative
  /// value restores the default.
  static void set_cache_limit_bytes(int64_t bytes);
  /// Bytes the cache keeps now.
  static int64_t cached_bytes();
  /// Gives every cached block back to the system.
  static void release_cached_memory();

  // Buffers written by work launched on a stream exist before their contents: the frontend hands
  // them to the nodes at launch, and the stream fulfils (or fails) them and then sets their
  // event. Readers wait for the event: that is how a reader on another stream, or a blocking
  // point, waits for exactly the work it needs.

  /// A buffer over `size` elements of `dtype` at `data`, memory that lazuli does not own: never
  /// written, not counted against the memory limit, and handed back by calling `release` when
  /// the buffer is destroyed (on whichever thread lets go of it last).
  static std::shared_ptr<Buffer> borrow(DType dtype, int64_t size, const void* data,
                                        std::function<void()> release);

  /// A buffer of `size` elements of `dtype` that the work setting `written` will fulfil or fail.
  static std::shared_ptr<Buffer> promise(DType dtype, int64_t size, std::shared_ptr<Event> written);
  /// Gives this promised buffer the contents of `computed` (same dtype and size), which it keeps
  /// alive. Called by the writing work before it sets the event.
  void fulfil(std::shared_ptr<Buffer> computed);
  /// Records why the writing work could not compute this buffer; before the event is set.
  void fail(std::exception_ptr error);
  /// True for a buffer that was always written, and for a promise once its event is set.
  bool is_ready() const { return written_ == nullptr || written_->is_set(); }
  /// Blocks until is_ready().
  void wait() const {
    if (written_ != nullptr) written_->wait();
  }
  /// is_ready(), and for device memory, the device has run the work writing it (launches on a
  /// device are only queued when their promises are kept); never blocks.
  bool is_computed() const;
  /// Once ready: the failure that left this buffer unwritten, or null.
  const std::exception_ptr& error() const { return error_; }
  /// The event set once this buffer is written or failed; null for a buffer always written.
  const std::shared_ptr<Event>& written() const { return written_; }

  // A buffer computed on a device holds its elements in the device's memory; data() is null.
  // A blocking point reads it through host(), which copies the elements at its first call.

  /// A buffer of `size` elements of `dtype` in `memory`.
  static std::shared_ptr<Buffer> on_device(DType dtype, int64_t size,
                                           std::unique_ptr<DeviceMemory> memory);
  /// The device memory of this buffer (of a fulfilled promise, its storage's); null on the host.
  const DeviceMemory* device_memory() const;
  /// This buffer when its elements are on the host; for device memory, a host copy made at the
  /// first call (blocking until the device has written them) and kept.
  const Buffer& host() const;

  // A kernel may write its output over an input that nothing can read after it (an optimizer's
  // new parameters over the old ones): the output then takes the input's memory, and the step
  // needs no second copy of its state.

  /// The buffer whose memory holds `buffer`'s elements (`buffer` itself, or the storage of a
  /// fulfilled promise), when `buffer` is the caller's only reference to it, its storage is held
  /// by nothing else, and lazuli owns that memory on the host: never borrowed, on a device, or
  /// copied to one. Null otherwise, and for a promise not yet fulfilled or one that failed.
  static std::shared_ptr<Buffer> exclusive_storage(const std::shared_ptr<Buffer>& buffer);

  // A kernel on a device reads a buffer whose elements are elsewhere (a host tensor moved with
  // to(cuda), a tensor of another device) through a copy in that device's memory, made once
  // and kept for the buffer's life: a tensor moved once and read by many kernels crosses the
  // bus once.

  /// Makes the elements of a buffer held elsewhere.
  using DeviceCopier = std::function<std::unique_ptr<DeviceMemory>(const Buffer& host)>;
  /// The copy of this buffer's elements in the memory of device `device` (its DeviceMemory
  /// index): `copy` makes it from the host elements at the first call for that device, and it
  /// is kept. Concurrent first calls for one device make one copy. The copy is then read from
  /// any stream of the device: its DeviceMemory orders those reads after the writes `copy`
  /// queued.
  const DeviceMemory& device_copy(int device, const DeviceCopier& copy) const;

  // A memory limit bounds the bytes of buffers alive at once; an allocation beyond it fails with
  // std::bad_alloc, which the executor reports as an lz::Error naming the op.

  /// LZ_MEMORY_LIMIT (bytes), else 80% of the physical memory.
  static int64_t memory_limit();
  /// Overrides the limit; `bytes <= 0` restores the default.
  static void set_memory_limit(int64_t bytes);
  /// Bytes of the buffers alive now (not counting the cache's free blocks).
  static int64_t live_bytes();
  /// The most bytes alive at once since the last restart_peak_live_bytes(), which starts it
  /// over from live_bytes(): a launch's peak in the log (with launches on several streams at
  /// once, theirs together).
  static int64_t peak_live_bytes();
  static void restart_peak_live_bytes();

  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer();

  DType dtype() const { return dtype_; }
  /// Number of elements.
  int64_t size() const { return size_; }
  int64_t bytes() const { return size_ * dtype_size(dtype_); }
  void* data() { return data_; }
  const void* data() const { return data_; }
  /// Typed view; bool tensors are read as `bool` (one byte each).
  template <class T>
  T* data_as() {
    return static_cast<T*>(data_);
  }
  template <class T>
  const T* data_as() const {
    return static_cast<const T*>(data_);
  }

 private:
  Buffer(DType dtype, int64_t size, void* data) : dtype_(dtype), size_(size), data_(data) {}
  DType dtype_;
  int64_t size_;
  void* data_;                       // owned unless `storage_` holds it or `release_` is set
  std::function<void()> release_;    // borrowed memory: hands `data_` back to its owner
  std::shared_ptr<Buffer> storage_;  // a fulfilled promise: the buffer whose memory it shows
  std::shared_ptr<Event> written_;   // a promise: set once written or failed
  std::exception_ptr error_;         // a failed promise: why
  std::unique_ptr<DeviceMemory> device_memory_;  // elements on a device (data_ is null)
  mutable std::once_flag host_copy_made_;
  mutable std::shared_ptr<Buffer> host_copy_;  // of device memory, once host() was called
  mutable std::mutex device_copies_mutex_;
  mutable std::vector<std::unique_ptr<DeviceMemory>> device_copies_;  // device_copy()'s
};

}  // namespace lz::memory
