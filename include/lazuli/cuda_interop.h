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
/// written its elements, so that work on any stream may read them. The caller's library reads
/// them on `reader_stream` (a CUstream as an integer; 1 or 2: the legacy or the per-thread
/// default stream, as DLPack numbers them, 0 as 1): once `owner` is let go, lazuli reuses the
/// memory only after the work queued on that stream by then has run (a default stream stands
/// for the blocking streams only: reads on another non-blocking stream must be named). Throws
/// for a tensor on the CPU. Neither side may write the memory while both hold it.
DeviceElements device_elements(const Tensor& x, uint64_t reader_stream = 1, LZ_HERE);

/// As device_elements, but a copy of the elements in device memory of its own, which the caller
/// may write without changing `x`: what a DLPack consumer gets unless it asks for no copy.
/// Released as device_elements' memory is, after the work queued on `reader_stream` has run.
DeviceElements device_elements_copy(const Tensor& x, uint64_t reader_stream = 1, LZ_HERE);

/// A tensor of `shape` and `dtype` over the row-major elements at `address` on CUDA device
/// `device`, memory that lazuli does not own and never writes. The elements must be written
/// before the call (the work writing them finished), and stay valid and unchanged until lazuli
/// calls `release`: exactly once, after the last tensor and queued kernel reading them let go,
/// or before the call returns when it throws (`release` must not throw). lazuli's kernels read
/// 16 bytes at a time: elements at an address that is not a multiple of 16 (a slice of another
/// library's array) are copied once, on the device, and released at once.
Tensor borrow_device_elements(uint64_t address, DType dtype, Shape shape, int device,
                              std::function<void()> release, LZ_HERE);

/// Blocks until CUDA device `device` has run everything queued on it, by lazuli or by another
/// library of the process (its primary context): what DLPack's producer queued before handing
/// its memory over, on whichever stream.
void synchronize(int device, LZ_HERE);

#undef LZ_HERE

}  // namespace lz::cuda
