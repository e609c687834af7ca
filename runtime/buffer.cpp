#include "runtime/buffer.h"

#include "runtime/statistics.h"

#include <cstdlib>
#include <new>

namespace lz::runtime {
namespace {
constexpr size_t kAlignment = 64;  // a cache line, and enough for any vector load
}

std::shared_ptr<Buffer> Buffer::allocate(DType dtype, int64_t size) {
  size_t bytes = 0;
  if (size < 0 || __builtin_mul_overflow(static_cast<size_t>(size), dtype_size(dtype), &bytes) ||
      bytes > (size_t{1} << 62)) {
    throw std::bad_alloc();
  }
  // aligned_alloc needs a multiple of the alignment, and a non-zero size to return a pointer.
  const size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  void* data = std::aligned_alloc(kAlignment, rounded == 0 ? kAlignment : rounded);
  if (data == nullptr) throw std::bad_alloc();
  counters().bytes_allocated.fetch_add(static_cast<int64_t>(bytes), std::memory_order_relaxed);
  return std::shared_ptr<Buffer>(new Buffer(dtype, size, data));
}

Buffer::~Buffer() { std::free(data_); }

}  // namespace lz::runtime
