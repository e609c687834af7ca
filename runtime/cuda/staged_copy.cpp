#include "runtime/cuda/staged_copy.h"

#include <algorithm>
#include <cstring>

#include "runtime/cuda/device.h"

namespace lz::runtime::cuda {

StagedCopies::~StagedCopies() {
  // Never throws: at exit the context may be gone, and nothing is left to do then.
  (void)device_.driver().api.ctx_set_current(device_.context());
  for (void* buffer : buffers_) {
    if (buffer != nullptr) (void)device_.driver().api.mem_free_host(buffer);
  }
}

void StagedCopies::make_buffers() {
  if (buffers_[0] != nullptr) return;
  device_.make_current();
  for (size_t i = 0; i < buffers_.size(); ++i) {
    check(
        device_.driver(),
        device_.driver().api.mem_alloc_host(&buffers_[i], static_cast<size_t>(kStagingChunkBytes)),
        "cuda", "cuMemAllocHost");
    drained_[i] = std::make_unique<CudaEvent>(device_);
  }
}

void StagedCopies::to_device(uint64_t address, const void* host, int64_t bytes, CUstream stream,
                             const char* op) {
  if (bytes < kStagedCopyMinBytes) {  // from pageable memory: read by the time the call returns
    device_.make_current();
    check(device_.driver(),
          device_.driver().api.memcpy_htod_async(address, host, static_cast<size_t>(bytes), stream),
          op, "cuMemcpyHtoDAsync");
    return;
  }
  std::lock_guard lock(mutex_);
  make_buffers();
  const auto* from = static_cast<const char*>(host);
  for (int64_t offset = 0, chunk = 0; offset < bytes; offset += kStagingChunkBytes, ++chunk) {
    const size_t slot = static_cast<size_t>(chunk % 2);
    const int64_t size = std::min(kStagingChunkBytes, bytes - offset);
    // The device may still be reading this buffer's previous chunk (or a previous copy's).
    drained_[slot]->synchronize(op);
    std::memcpy(buffers_[slot], from + offset, static_cast<size_t>(size));
    check(device_.driver(),
          device_.driver().api.memcpy_htod_async(address + static_cast<uint64_t>(offset),
                                                 buffers_[slot], static_cast<size_t>(size), stream),
          op, "cuMemcpyHtoDAsync");
    drained_[slot]->record(stream);
  }
}

void StagedCopies::to_host(void* host, uint64_t address, int64_t bytes, CUstream stream,
                           const char* op) {
  if (bytes < kStagedCopyMinBytes) {
    device_.make_current();
    check(device_.driver(),
          device_.driver().api.memcpy_dtoh_async(host, address, static_cast<size_t>(bytes), stream),
          op, "cuMemcpyDtoHAsync");
    device_.synchronize(stream, op);
    return;
  }
  std::lock_guard lock(mutex_);
  make_buffers();
  auto* to = static_cast<char*>(host);
  const int64_t chunks = (bytes + kStagingChunkBytes - 1) / kStagingChunkBytes;
  const auto queue = [&](int64_t chunk) {
    const size_t slot = static_cast<size_t>(chunk % 2);
    const int64_t offset = chunk * kStagingChunkBytes;
    // A buffer is refilled only after the host has copied its previous chunk out (below), and
    // after a previous to_device's copies from it ran (they are on another stream, maybe).
    drained_[slot]->make_wait(stream);
    check(device_.driver(),
          device_.driver().api.memcpy_dtoh_async(
              buffers_[slot], address + static_cast<uint64_t>(offset),
              static_cast<size_t>(std::min(kStagingChunkBytes, bytes - offset)), stream),
          op, "cuMemcpyDtoHAsync");
    drained_[slot]->record(stream);
  };
  for (int64_t chunk = 0; chunk < std::min<int64_t>(chunks, 2); ++chunk) queue(chunk);
  for (int64_t chunk = 0; chunk < chunks; ++chunk) {
    const size_t slot = static_cast<size_t>(chunk % 2);
    const int64_t offset = chunk * kStagingChunkBytes;
    drained_[slot]->synchronize(op);
    std::memcpy(to + offset, buffers_[slot],
                static_cast<size_t>(std::min(kStagingChunkBytes, bytes - offset)));
    if (chunk + 2 < chunks) queue(chunk + 2);
  }
}

}  // namespace lz::runtime::cuda
