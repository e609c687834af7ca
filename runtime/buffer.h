// Contiguous, row-major storage of one tensor's elements on the host.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "lazuli/dtype.h"

namespace lz::runtime {

class Buffer {
 public:
  /// Uninitialized storage for `size` elements of `dtype`, 64-byte aligned. Storage of 1 MiB
  /// or more is 2 MiB aligned and may be the memory of a buffer destroyed earlier (see below).
  static std::shared_ptr<Buffer> allocate(DType dtype, int64_t size);

  // Large buffers are recycled: the first touch of fresh memory costs a page fault per 4 KiB
  // (tens of milliseconds for 64 MB), and a program that evaluates in a loop allocates the same
  // sizes again and again. A destroyed buffer of 1 MiB or more keeps its memory in a cache, by
  // size rounded up to 2 MiB, for the next allocation of that size.

  /// Bytes the cache may keep: LZ_BUFFER_CACHE_BYTES (0 turns it off), else min(1 GiB, RAM / 4).
  static int64_t cache_limit_bytes();
  /// Overrides the limit (tests, benchmarks), freeing the oldest blocks above it; a negative
  /// value restores the default.
  static void set_cache_limit_bytes(int64_t bytes);
  /// Bytes the cache keeps now.
  static int64_t cached_bytes();
  /// Gives every cached block back to the system.
  static void release_cached_memory();

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
  void* data_;
};

}  // namespace lz::runtime
