// One CUDA device as lazuli drives it: its primary context, a CUDA stream per lazuli stream
// index and one for uploads, the caching allocator of its memory, and the modules loaded into it.
// Every call makes the device's context current on the calling thread first (a lazuli stream's
// worker may serve several devices over its life).
#pragma once

#include <array>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/cuda/caching_allocator.h"
#include "runtime/cuda/driver.h"
#include "runtime/cuda/staged_copy.h"
#include "runtime/devices.h"

namespace lz::runtime::cuda {

class CudaDevice {
 public:
  /// Retains device `ordinal`'s primary context. Throws lz::Error when it cannot.
  CudaDevice(const Driver& driver, int ordinal);
  CudaDevice(const CudaDevice&) = delete;
  CudaDevice& operator=(const CudaDevice&) = delete;

  int ordinal() const { return ordinal_; }
  const DeviceProperties& properties() const { return properties_; }
  const Driver& driver() const { return driver_; }
  CUcontext context() const { return context_; }

  /// Makes this device's context current on the calling thread.
  void make_current() const;
  /// The CUDA stream behind lazuli stream `index` (0 <= index < kStreamsPerDevice), the upload
  /// stream (kUploadStream) or the collective stream (kCollectiveStream), created at first use;
  /// it does not synchronize with the legacy default stream. Makes the device's context current
  /// on the calling thread.
  CUstream stream(int index);
  CachingAllocator& allocator() { return *allocator_; }
  /// Copies between host buffers and this device's memory.
  StagedCopies& host_copies() { return host_copies_; }

  /// Loads a cubin or PTX image; the module stays loaded for the life of the process.
  CUmodule load_module(const void* image);
  CUfunction function(CUmodule module, const std::string& symbol);
  /// Queues `function` on `stream` with one-dimensional `grid` x `block` threads.
  void launch(CUfunction function, unsigned grid, unsigned block, void** parameters,
              CUstream stream, const char* op);
  /// Blocks until everything queued on `stream` has run; throws what the device reported.
  void synchronize(CUstream stream, const char* op);

 private:
  const Driver& driver_;
  const int ordinal_;
  DeviceProperties properties_;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  std::mutex mutex_;                              // guards streams_ creation
  std::array<CUstream, kCudaStreams> streams_{};  // lazuli's, kUploadStream, kCollectiveStream
  std::unique_ptr<CachingAllocator> allocator_;
  StagedCopies host_copies_{*this};
};

/// CUDA device `ordinal`, opened at first use and kept until exit. Throws lz::Error saying why
/// when there is no such device.
CudaDevice& cuda_device(int ordinal);

}  // namespace lz::runtime::cuda
