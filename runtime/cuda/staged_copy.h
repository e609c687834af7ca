// Copies between pageable host memory (lazuli's host buffers) and a CUDA device through two
// page-locked staging buffers. The device's copy engines reach page-locked memory directly and
// at full speed; from pageable memory the driver stages through small buffers of its own and
// reaches a fraction of it. A large copy goes in chunks, alternating between the two buffers:
// the host copies one chunk while the device moves the other.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>

#include "runtime/cuda/driver.h"
#include "runtime/cuda/memory.h"

namespace lz::runtime::cuda {

class CudaDevice;

/// Below this a copy goes directly from or to the pageable memory: staging saves nothing there.
constexpr int64_t kStagedCopyMinBytes = int64_t{1} << 20;
/// The size of each staging buffer, and so of a chunk.
constexpr int64_t kStagingChunkBytes = int64_t{4} << 20;

/// The host copies of one device. A copy below kStagedCopyMinBytes goes directly; larger ones
/// go through the staging buffers, allocated at the first and kept, and take turns (one at a
/// time per device).
class StagedCopies {
 public:
  explicit StagedCopies(CudaDevice& device) : device_(device) {}
  ~StagedCopies();
  StagedCopies(const StagedCopies&) = delete;
  StagedCopies& operator=(const StagedCopies&) = delete;

  /// Queues a copy of `bytes` from `host` to device memory `address` on `stream`; `host` may be
  /// changed or freed once the call returns.
  void to_device(uint64_t address, const void* host, int64_t bytes, CUstream stream,
                 const char* op);
  /// Copies `bytes` of device memory `address` to `host` after the work queued on `stream`,
  /// returning once they are there. Throws lz::Error with what the device reported.
  void to_host(void* host, uint64_t address, int64_t bytes, CUstream stream, const char* op);

 private:
  /// Allocates the buffers and events at the first use. Called with mutex_ held.
  void make_buffers();

  CudaDevice& device_;
  std::mutex mutex_;
  std::array<void*, 2> buffers_{};                     // page-locked; guarded by mutex_
  std::array<std::unique_ptr<CudaEvent>, 2> drained_;  // the device is done with a buffer
};

}  // namespace lz::runtime::cuda
