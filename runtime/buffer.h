// Contiguous, row-major storage of one tensor's elements on the host.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "lazuli/dtype.h"

namespace lz::runtime {

class Buffer {
 public:
  /// Uninitialized storage for `size` elements of `dtype`, 64-byte aligned.
  static std::shared_ptr<Buffer> allocate(DType dtype, int64_t size);

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
