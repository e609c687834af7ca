#include "runtime/cuda/memory.h"

#include <algorithm>
#include <functional>
#include <vector>

#include "runtime/cuda/device.h"

namespace lz::runtime::cuda {

CudaEvent::CudaEvent(CudaDevice& device) : device_(device) {
  device_.make_current();
  check(device_.driver(), device_.driver().api.event_create(&event_, kEventDisableTiming), "cuda",
        "cuEventCreate");
}

CudaEvent::~CudaEvent() {
  // Never throws: at exit the context may be gone, and nothing is left to do then.
  (void)device_.driver().api.ctx_set_current(device_.context());
  (void)device_.driver().api.event_destroy(event_);
}

void CudaEvent::record(CUstream stream) {
  device_.make_current();
  check(device_.driver(), device_.driver().api.event_record(event_, stream), "cuda",
        "cuEventRecord");
}

void CudaEvent::make_wait(CUstream stream) const {
  device_.make_current();
  check(device_.driver(), device_.driver().api.stream_wait_event(stream, event_, 0), "cuda",
        "cuStreamWaitEvent");
}

void CudaEvent::synchronize(const char* op) const {
  device_.make_current();
  check(device_.driver(), device_.driver().api.event_synchronize(event_), op, "cuEventSynchronize");
}

bool CudaEvent::reached() const {
  (void)device_.driver().api.ctx_set_current(device_.context());
  // Anything but "not ready" ends the wait: a fault is reported by whatever reads next.
  return device_.driver().api.event_query(event_) != kErrorNotReady;
}

CudaMemory::CudaMemory(CudaDevice& device, int64_t bytes, int stream, const std::string& op)
    : device_(device),
      bytes_(bytes),
      stream_(stream),
      address_(device.allocator().allocate(bytes, stream, op)) {}

// Borrowed memory counts as written on the upload stream, where nothing is queued for it: every
// lazuli stream that reads it is a reader, waited for before the memory goes back.
CudaMemory::CudaMemory(CudaDevice& device, uint64_t address, int64_t bytes,
                       std::function<void()> release)
    : device_(device),
      bytes_(bytes),
      stream_(kUploadStream),
      address_(address),
      release_(std::move(release)) {}

CudaMemory::~CudaMemory() {
  try {
    // The reads queued until now on the other streams that read the block, and elsewhere.
    std::vector<std::shared_ptr<CudaEvent>> reads = foreign_reads_;
    for (int reader = 0; reader < kCudaStreams; ++reader) {
      if (!readers_.test(static_cast<size_t>(reader))) continue;
      reads.push_back(std::make_shared<CudaEvent>(device_));
      reads.back()->record(device_.stream(reader));
    }
    if (release_) {
      // Its owner may reuse the memory at once: the reads run first.
      for (const auto& read : reads) read->synchronize("release");
    } else {
      // The block returns to its stream's cache once the reads have run; its own stream is not
      // made to wait for them.
      std::function<bool()> reusable;
      if (!reads.empty()) {
        reusable = [reads = std::move(reads)] {
          return std::ranges::all_of(reads, [](const auto& read) { return read->reached(); });
        };
      }
      device_.allocator().free(address_, bytes_, stream_, std::move(reusable));
    }
  } catch (...) {  // a failed driver call (a device fault: nothing reads the memory any more),
                   // or no memory for the cache's bookkeeping: the block is lost, not the process
  }
  if (release_) {
    try {
      release_();
    } catch (...) {  // the owner's failure to take its memory back is not lazuli's to report
    }
  }
}

int CudaMemory::device_index() const { return device_.ordinal(); }

void CudaMemory::copy_to_host(void* host, int64_t bytes) const {
  // On the writing stream, the copy comes after the writes.
  device_.host_copies().to_host(host, address_, bytes, device_.stream(stream_), "read");
}

void CudaMemory::wait() const {
  std::shared_ptr<CudaEvent> written;
  {
    std::lock_guard lock(mutex_);
    written = written_;
  }
  if (written != nullptr) written->synchronize("wait");
}

bool CudaMemory::is_written() const {
  std::lock_guard lock(mutex_);
  return written_ == nullptr || written_->reached();
}

void CudaMemory::set_written(std::shared_ptr<CudaEvent> written) {
  std::lock_guard lock(mutex_);
  written_ = std::move(written);
}

void CudaMemory::read_elsewhere(CUstream stream) const {
  auto read = std::make_shared<CudaEvent>(device_);
  read->record(stream);
  std::lock_guard lock(mutex_);
  foreign_reads_.push_back(std::move(read));
}

void CudaMemory::read_on(int stream) const {
  if (stream == stream_) return;  // in stream order already
  std::lock_guard lock(mutex_);
  if (written_ != nullptr) written_->make_wait(device_.stream(stream));
  readers_.set(static_cast<size_t>(stream));
}

void mark_written(CudaDevice& device, int stream, const std::vector<CudaMemory*>& outputs) {
  auto written = std::make_shared<CudaEvent>(device);
  written->record(device.stream(stream));
  for (CudaMemory* output : outputs) output->set_written(written);
}

namespace {

/// The memory holding `buffer`'s elements on `device`: its own, or the copy it keeps there.
const CudaMemory& memory_on(CudaDevice& device, const memory::Buffer& buffer,
                            const std::string& op) {
  const memory::DeviceMemory* memory = buffer.device_memory();
  if (memory == nullptr || memory->device_index() != device.ordinal()) {
    memory = &buffer.device_copy(
        device.ordinal(), [&](const memory::Buffer& host) -> std::unique_ptr<memory::DeviceMemory> {
          auto copy = std::make_unique<CudaMemory>(device, host.bytes(), kUploadStream, op);
          device.host_copies().to_device(copy->address(), host.data(), host.bytes(),
                                         device.stream(kUploadStream), op.c_str());
          mark_written(device, kUploadStream, {copy.get()});
          return copy;
        });
  }
  // Every memory::DeviceMemory of a CUDA device is a CudaMemory.
  return *static_cast<const CudaMemory*>(memory);
}

}  // namespace

uint64_t read_address(CudaDevice& device, int stream, const memory::Buffer& buffer,
                      const std::string& op) {
  const CudaMemory& memory = memory_on(device, buffer, op);
  memory.read_on(stream);
  return memory.address();
}

uint64_t written_address(CudaDevice& device, const memory::Buffer& buffer, const std::string& op) {
  const CudaMemory& memory = memory_on(device, buffer, op);
  memory.wait();
  return memory.address();
}

void read_elsewhere(CudaDevice& device, const memory::Buffer& buffer, CUstream stream) {
  memory_on(device, buffer, "read_elsewhere").read_elsewhere(stream);
}

std::unique_ptr<CudaMemory> copy_device_memory(CudaDevice& device, uint64_t address, int64_t bytes,
                                               const std::string& op) {
  auto copy = std::make_unique<CudaMemory>(device, bytes, kUploadStream, op);
  if (bytes > 0) {
    check(device.driver(),
          device.driver().api.memcpy_dtod_async(
              copy->address(), address, static_cast<size_t>(bytes), device.stream(kUploadStream)),
          op.c_str(), "cuMemcpyDtoDAsync");
  }
  mark_written(device, kUploadStream, {copy.get()});
  copy->wait();
  return copy;
}

}  // namespace lz::runtime::cuda
