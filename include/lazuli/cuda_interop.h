// CUDA tensors shared with other libraries without a copy: what DLPack (PyTorch, JAX, CuPy)
// needs from lazuli, a tensor's device memory, and from them, a tensor over theirs.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <source_location>

#include "lazuli/tensor.h"

namespace lz::cuda {

#define LZ_HERE std::source_location loc = std::source_location::current()

/// Where a CUDA tensor's row-major elements lie on its device.
struct DeviceElements {
  uint64_t address = 0;               // the device address of the first element
  int device = 0;                     // the CUDA device's index
  std::shared_ptr<const void> owner;  // keeps the memory the tensor's while held
};

/// A blocking point: computes `x`, a tensor on a CUDA device, and waits until the device has
/// written its elements, so that work on any stream may read them. Throws for a tensor on the
/// CPU. The memory must not be written through the address.
DeviceElements device_elements(const Tensor& x, LZ_HERE);

/// A tensor of `shape` and `dtype` over the row-major elements at `address` on CUDA device
/// `device`, memory that lazuli does not own and never writes. The elements must be written
/// before the call (the work writing them finished), and stay valid and unchanged until lazuli
/// calls `release`: once, after the last tensor and queued kernel reading them let go.
Tensor borrow_device_elements(uint64_t address, DType dtype, Shape shape, int device,
                              std::function<void()> release, LZ_HERE);

/// Blocks until CUDA device `device` has run everything queued on it, by lazuli or by another
/// library of the process (its primary context): what DLPack's producer queued before handing
/// its memory over, on whichever stream.
void synchronize(int device, LZ_HERE);

#undef LZ_HERE

}  // namespace lz::cuda
