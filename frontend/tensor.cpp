// lz::Tensor's accessors and its blocking reads.
#include <cstdio>
#include <cstring>

#include "frontend/evaluation.h"
#include "frontend/recording.h"
#include "lazuli/error.h"
#include "memory/buffer.h"
#include "runtime/devices.h"

namespace lz {
namespace {

/// Runs a then() callback on the callback thread, where nobody could catch what it throws.
void run_callback(const std::function<void()>& callback, std::source_location loc) {
  try {
    callback();
  } catch (const std::exception& error) {
    std::fprintf(stderr, "[lazuli] the then() callback given at %s:%u threw and was dropped: %s\n",
                 loc.file_name(), static_cast<unsigned>(loc.line()), error.what());
  } catch (...) {
    std::fprintf(stderr, "[lazuli] the then() callback given at %s:%u threw and was dropped\n",
                 loc.file_name(), static_cast<unsigned>(loc.line()));
  }
}

const char* cpp_type_name(DType dtype) {
  switch (dtype) {
    case DType::Float32: return "float";
    case DType::Float64: return "double";
    case DType::Int32: return "int32_t";
    case DType::Int64: return "int64_t";
    case DType::Bool: return "bool";
  }
  return "?";
}

/// Reading never converts silently: T must be the tensor's element type.
template <class T>
void check_read_type(std::string_view op, const ir::Node& node) {
  if (node.dtype != dtype_of<T>()) {
    throw Error("[" + std::string(op) + "] tensor of shape " + shape_string(node.shape) + " is " +
                dtype_name(node.dtype) + " but " + std::string(op) + "<" +
                cpp_type_name(dtype_of<T>()) + "> was called; use " + std::string(op) + "<" +
                cpp_type_name(node.dtype) + "> or astype(" + dtype_name(dtype_of<T>()) + ") first");
  }
}

/// Evaluates `tensor` if needed, waits for it and returns its elements on the host (copied
/// from a CUDA device's memory at the first read).
const memory::Buffer& computed(const Tensor& tensor, EvaluationReason reason,
                               std::source_location loc) {
  frontend::evaluate({tensor.node()}, reason, loc);
  return tensor.node()->buffer->host();
}

/// The buffer of a tensor that has been launched (never null after an evaluate).
std::shared_ptr<memory::Buffer> launched_buffer(const ir::NodePtr& node) {
  const auto lock = frontend::lock_graph();  // set by whichever thread launched it
  return node->buffer;
}

/// then()'s evaluation, as a call of its own: an error the user's callback throws is not lazuli's.
std::shared_ptr<memory::Buffer> launched_for_then(const Tensor& tensor,
                                                  std::source_location loc) try {
  const ir::NodePtr& node = frontend::node_of(tensor, "then");
  frontend::evaluate({node}, EvaluationReason::EvalAsync, loc);
  return launched_buffer(node);
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

/// The thread that runs callbacks, started here on the caller's thread: a failure to start it
/// is then() raising an lz::Error, never a callback silently dropped by a stream's worker.
runtime::Stream& callback_thread(std::source_location loc) try {
  return runtime::callback_stream();
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

}  // namespace

Tensor::Tensor(std::shared_ptr<ir::Node> node) : node_(std::move(node)) {}

Shape Tensor::shape(std::source_location loc) const {
  return frontend::node_of(*this, "shape", loc)->shape;
}
DType Tensor::dtype(std::source_location loc) const {
  return frontend::node_of(*this, "dtype", loc)->dtype;
}
Device Tensor::device(std::source_location loc) const {
  return frontend::node_of(*this, "device", loc)->device;
}
int64_t Tensor::size(std::source_location loc) const {
  return frontend::node_of(*this, "size", loc)->size();
}
int Tensor::ndim(std::source_location loc) const {
  return frontend::node_of(*this, "ndim", loc)->ndim();
}

template <Element T>
T Tensor::item(std::source_location loc) const try {
  const ir::Node& node = *frontend::node_of(*this, "item");
  if (node.size() != 1) {
    throw Error("[item] needs a tensor of exactly one element, got shape " +
                shape_string(node.shape) + " (" + std::to_string(node.size()) +
                " elements); use to_vector to read several");
  }
  check_read_type<T>("item", node);
  return computed(*this, EvaluationReason::Item, loc).data_as<T>()[0];
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

template <Element T>
std::vector<T> Tensor::to_vector(std::source_location loc) const try {
  const ir::Node& node = *frontend::node_of(*this, "to_vector");
  check_read_type<T>("to_vector", node);
  const memory::Buffer& buffer = computed(*this, EvaluationReason::ToVector, loc);
  const T* data = buffer.data_as<T>();
  return std::vector<T>(data, data + buffer.size());
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

template <Element T>
std::span<const T> Tensor::data(std::source_location loc) const try {
  check_read_type<T>("data", *frontend::node_of(*this, "data"));
  const memory::Buffer& buffer = computed(*this, EvaluationReason::Read, loc);
  return {buffer.data_as<T>(), static_cast<size_t>(buffer.size())};
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

template <Element T>
void Tensor::copy_to(std::span<T> out, std::source_location loc) const try {
  const ir::Node& node = *frontend::node_of(*this, "copy_to");
  check_read_type<T>("copy_to", node);
  if (static_cast<int64_t>(out.size()) != node.size()) {
    throw Error("[copy_to] the destination holds " + std::to_string(out.size()) +
                " elements but the tensor of shape " + shape_string(node.shape) + " has " +
                std::to_string(node.size()));
  }
  const memory::Buffer& buffer = computed(*this, EvaluationReason::Read, loc);
  if (!out.empty()) std::memcpy(out.data(), buffer.data(), out.size() * sizeof(T));
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

#define LZ_DEFINE_READ(T)                                                   \
  template T Tensor::item<T>(std::source_location) const;                   \
  template std::vector<T> Tensor::to_vector<T>(std::source_location) const; \
  template std::span<const T> Tensor::data<T>(std::source_location) const;  \
  template void Tensor::copy_to<T>(std::span<T>, std::source_location) const;
LZ_DEFINE_READ(float)
LZ_DEFINE_READ(double)
LZ_DEFINE_READ(int32_t)
LZ_DEFINE_READ(int64_t)
LZ_DEFINE_READ(bool)
#undef LZ_DEFINE_READ

void Tensor::wait_to_read(std::source_location loc) const try {
  frontend::evaluate({frontend::node_of(*this, "wait_to_read")}, EvaluationReason::WaitToRead, loc);
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

void Tensor::eval_async(std::source_location loc) const try {
  frontend::evaluate({frontend::node_of(*this, "eval_async")}, EvaluationReason::EvalAsync, loc);
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

bool Tensor::is_ready(std::source_location loc) const {
  return frontend::is_computed(frontend::node_of(*this, "is_ready", loc));
}

void Tensor::then(std::function<void()> callback, std::source_location loc) const {
  const std::shared_ptr<memory::Buffer> buffer = launched_for_then(*this, loc);
  if (buffer->is_computed()) {
    callback();
    return;
  }
  // The callback thread runs it, after the device (if any) has run the work writing the value:
  // there the stream only queues that work before setting the event.
  runtime::Stream* const callbacks = &callback_thread(loc);
  const auto run_later = [buffer, callback = std::move(callback), loc, callbacks] {
    callbacks->submit([buffer, callback, loc] {
      if (const memory::DeviceMemory* memory =
              buffer->error() == nullptr ? buffer->device_memory() : nullptr) {
        try {
          memory->wait();
        } catch (...) {  // a device fault: the callback's read of the value raises it again
        }
      }
      run_callback(callback, loc);
    });
  };
  if (const std::shared_ptr<memory::Event>& written = buffer->written()) {
    written->on_set(run_later);
  } else {
    run_later();
  }
}

Tensor Tensor::to(Device device, std::source_location loc) const try {
  const ir::NodePtr& source = frontend::node_of(*this, "to");
  if (source->device == device) return *this;
  frontend::evaluate({source}, EvaluationReason::EvalAsync, loc);
  return frontend::record_data(launched_buffer(source), source->shape, device, loc);
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

}  // namespace lz
