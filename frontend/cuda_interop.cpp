// CUDA tensors shared with other libraries without a copy (include/lazuli/cuda_interop.h).
#include "lazuli/cuda_interop.h"

#include <string>
#include <utility>

#include "frontend/evaluation.h"
#include "frontend/recording.h"
#include "lazuli/error.h"
#include "runtime/cuda/device.h"
#include "runtime/cuda/memory.h"

namespace lz::cuda {

namespace {

/// device_elements, of the tensor's own memory or of a copy (`op` names which).
DeviceElements exported_elements(const Tensor& x, uint64_t reader_stream, bool copy,
                                 const std::string& op, std::source_location loc) {
  const ir::NodePtr& node = frontend::node_of(x, op);
  if (node->device.kind() != Device::Kind::Cuda) {
    throw Error("[" + op + "] the tensor is on " + node->device.name() +
                ", not on a CUDA device; move it with to(lz::Device::cuda()) first");
  }
  frontend::evaluate({node}, EvaluationReason::Read, loc);
  std::shared_ptr<memory::Buffer> buffer;
  {
    const auto lock = frontend::lock_graph();  // the launching thread set it
    buffer = node->buffer;
  }
  const int device = node->device.index();
  runtime::cuda::CudaDevice& cuda = runtime::cuda::cuda_device(device);
  // A tensor made from host data has its elements on the device only once a kernel read them:
  // written_address uploads them then.
  uint64_t address = runtime::cuda::written_address(cuda, *buffer, op);
  if (copy) {
    buffer =
        memory::Buffer::on_device(node->dtype, node->size(),
                                  runtime::cuda::copy_device_memory(
                                      cuda, address, node->size() * dtype_size(node->dtype), op));
    address = runtime::cuda::written_address(cuda, *buffer, op);
  }
  // DLPack's 1 and 2, the legacy and the per-thread default streams, are both marked on the
  // legacy one (CUDA's handle 1, CU_STREAM_LEGACY): the owner may be let go on another thread
  // than the reader's, and the legacy stream waits for every thread's per-thread stream.
  const auto stream =
      reinterpret_cast<runtime::cuda::CUstream>(reader_stream <= 2 ? 1 : reader_stream);
  std::shared_ptr<const void> owner(buffer.get(), [&cuda, buffer, stream](const void*) {
    try {
      runtime::cuda::read_elsewhere(cuda, *buffer, stream);
    } catch (...) {  // a device fault: nothing reads the memory any more
    }
  });
  return {address, device, std::move(owner)};
}

}  // namespace

DeviceElements device_elements(const Tensor& x, uint64_t reader_stream,
                               std::source_location loc) try {
  return exported_elements(x, reader_stream, /*copy=*/false, "device_elements", loc);
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

DeviceElements device_elements_copy(const Tensor& x, uint64_t reader_stream,
                                    std::source_location loc) try {
  return exported_elements(x, reader_stream, /*copy=*/true, "device_elements_copy", loc);
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

Tensor borrow_device_elements(uint64_t address, DType dtype, Shape shape, int device,
                              std::function<void()> release, std::source_location loc) try {
  // `release` runs once whatever happens: when the memory is let go, or here on a failure.
  if (!release) release = [] {};
  struct ReleaseOnFailure {
    std::function<void()>& release;
    ~ReleaseOnFailure() {
      if (release) release();
    }
  } guard{release};
  frontend::check_shape("borrow_device_elements", shape);
  const Device on = Device::cuda(device);  // throws for a device this machine does not have
  const int64_t size = shape_size(shape);
  if (address == 0 && size > 0) {
    throw Error("[borrow_device_elements] got a null address for " + std::to_string(size) +
                " elements");
  }
  runtime::cuda::CudaDevice& cuda = runtime::cuda::cuda_device(device);
  const int64_t bytes = size * dtype_size(dtype);
  std::unique_ptr<runtime::cuda::CudaMemory> memory;
  if (address % 16 == 0) {
    // `release` moves to the memory only once it exists: a failure to make it leaves the guard
    // its release.
    auto moved = std::make_shared<std::function<void()>>();
    memory =
        std::make_unique<runtime::cuda::CudaMemory>(cuda, address, bytes, [moved] { (*moved)(); });
    *moved = std::exchange(release, nullptr);
  } else {
    memory = runtime::cuda::copy_device_memory(cuda, address, bytes, "borrow_device_elements");
    std::exchange(release, nullptr)();
  }
  return frontend::record_data(memory::Buffer::on_device(dtype, size, std::move(memory)),
                               std::move(shape), on, loc);
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

void synchronize(int device, std::source_location loc) try {
  runtime::cuda::CudaDevice& cuda = runtime::cuda::cuda_device(device);
  cuda.make_current();
  runtime::cuda::check(cuda.driver(), cuda.driver().api.ctx_synchronize(), "synchronize",
                       "cuCtxSynchronize");
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

}  // namespace lz::cuda
