// Tensors from the caller's memory: copied from a std::vector or a pointer (row- or
// column-major), or borrowed without a copy.
#include <cstring>
#include <functional>
#include <new>
#include <string>
#include <vector>

#include "frontend/recording.h"
#include "lazuli/error.h"
#include "memory/buffer.h"

namespace lz {
namespace {

void check_pointer(std::string_view op, const void* data, const Shape& shape) {
  if (data == nullptr && shape_size(shape) > 0) {
    throw Error("[" + std::string(op) + "] got a null pointer for the " +
                std::to_string(shape_size(shape)) + " elements of shape " + shape_string(shape));
  }
}

/// Copies the column-major elements at `from` into row-major `to`: the row-major walk over
/// `shape` keeps the column-major offset of its index up to date, one dimension at a time.
template <class T>
void copy_column_major(const T* from, T* to, const Shape& shape) {
  const size_t rank = shape.size();
  std::vector<int64_t> strides(rank);  // column-major strides, in elements
  int64_t stride = 1;
  for (size_t d = 0; d < rank; ++d) {
    strides[d] = stride;
    stride *= shape[d];
  }
  std::vector<int64_t> index(rank, 0);
  int64_t offset = 0;
  const int64_t size = shape_size(shape);
  for (int64_t i = 0; i < size; ++i) {
    to[i] = from[offset];
    for (size_t d = rank; d-- > 0;) {  // the next row-major index: the last dimension first
      if (++index[d] < shape[d]) {
        offset += strides[d];
        break;
      }
      offset -= strides[d] * (shape[d] - 1);
      index[d] = 0;
    }
  }
}

}  // namespace

namespace frontend {

std::shared_ptr<memory::Buffer> allocate_host(std::string_view op, DType dtype,
                                              const Shape& shape) {
  check_shape(op, shape);
  try {
    return memory::Buffer::allocate(dtype, shape_size(shape));
  } catch (const std::bad_alloc&) {
    throw Error("[" + std::string(op) + "] cannot allocate " +
                std::to_string(shape_size(shape) * static_cast<int64_t>(dtype_size(dtype))) +
                " bytes: " + std::to_string(memory::Buffer::live_bytes()) +
                " bytes of tensors are alive and the memory limit is " +
                std::to_string(memory::Buffer::memory_limit()) + " (lz::set_memory_limit)");
  }
}

}  // namespace frontend

template <Element T>
Tensor from_vector(const std::vector<T>& data, Shape shape, Device device,
                   std::source_location loc) try {
  frontend::check_shape("from_vector", shape);
  if (static_cast<int64_t>(data.size()) != shape_size(shape)) {
    throw Error("[from_vector] " + std::to_string(data.size()) + " values cannot fill shape " +
                shape_string(shape) + ", which holds " + std::to_string(shape_size(shape)));
  }
  std::shared_ptr<memory::Buffer> buffer =
      frontend::allocate_host("from_vector", dtype_of<T>(), shape);
  if constexpr (std::is_same_v<T, bool>) {
    // std::vector<bool> packs its values into bits: one at a time into lazuli's bytes.
    bool* elements = buffer->data_as<bool>();
    for (size_t i = 0; i < data.size(); ++i) elements[i] = data[i];
  } else if (!data.empty()) {
    std::memcpy(buffer->data(), data.data(), data.size() * sizeof(T));
  }
  return frontend::record_data(std::move(buffer), std::move(shape), device, loc);
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

template <Element T>
Tensor from_data(const T* data, Shape shape, Order order, Device device,
                 std::source_location loc) try {
  check_pointer("from_data", data, shape);
  std::shared_ptr<memory::Buffer> buffer =
      frontend::allocate_host("from_data", dtype_of<T>(), shape);
  if (shape_size(shape) > 0) {
    if (order == Order::ColumnMajor) {
      copy_column_major(data, buffer->data_as<T>(), shape);
    } else {
      std::memcpy(buffer->data(), data, static_cast<size_t>(shape_size(shape)) * sizeof(T));
    }
  }
  return frontend::record_data(std::move(buffer), std::move(shape), device, loc);
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

template <Element T>
Tensor borrow_data(const T* data, Shape shape, std::function<void()> release, Device device,
                   std::source_location loc) try {
  frontend::check_shape("borrow_data", shape);
  check_pointer("borrow_data", data, shape);
  // The buffer is made before the call: in one call, `shape` may be moved into record_data's
  // parameter before its size is read (the order of arguments is unspecified).
  std::shared_ptr<memory::Buffer> buffer =
      memory::Buffer::borrow(dtype_of<T>(), shape_size(shape), data, std::move(release));
  return frontend::record_data(std::move(buffer), std::move(shape), device, loc);
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

#define LZ_DEFINE_CREATION(T)                                                              \
  template Tensor from_vector(const std::vector<T>&, Shape, Device, std::source_location); \
  template Tensor from_data(const T*, Shape, Order, Device, std::source_location);         \
  template Tensor borrow_data(const T*, Shape, std::function<void()>, Device, std::source_location);
LZ_DEFINE_CREATION(float)
LZ_DEFINE_CREATION(double)
LZ_DEFINE_CREATION(int32_t)
LZ_DEFINE_CREATION(int64_t)
LZ_DEFINE_CREATION(bool)
#undef LZ_DEFINE_CREATION

}  // namespace lz
