// Device memory as lazuli's buffers hold it, and the CUDA events that order the work around it.
//
// Launches on a CUDA device are queued, never waited for: the stream that writes a block records
// an event after the writes, a kernel on another stream reading the block first makes its stream
// wait for that event, and a blocking point waits for it (or copies the block on the writing
// stream). A block goes back to the allocator on the stream that wrote it, after every other
// stream that read it has run what it had queued by then, so reuse never overtakes a read.
#pragma once

#include <bitset>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "memory/buffer.h"
#include "memory/device_memory.h"
#include "runtime/cuda/driver.h"
#include "runtime/devices.h"

namespace lz::runtime::cuda {

class CudaDevice;

// The CUDA streams of a device, by index: lazuli's streams 0 .. kStreamsPerDevice - 1, then two
// of the runtime's own.

/// Host-to-device uploads: a CUDA stream of their own, so that an upload waits for earlier
/// uploads only, never for kernels queued on the stream that will read it (which waits for the
/// upload's event instead), and the copy engine moves it while they run.
constexpr int kUploadStream = kStreamsPerDevice;
/// NCCL's collectives (runtime/cuda/nccl.h), queued by the communication thread: a collective
/// waits for the other ranks, and a lazuli stream goes on with the kernels that do not read it.
constexpr int kCollectiveStream = kStreamsPerDevice + 1;
constexpr int kCudaStreams = kStreamsPerDevice + 2;

/// A CUDA event without timing, destroyed with its owner (the driver keeps a pending record
/// alive until the device reaches it).
class CudaEvent {
 public:
  explicit CudaEvent(CudaDevice& device);
  ~CudaEvent();
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;

  /// Marks the point after everything queued on `stream` so far.
  void record(CUstream stream);
  /// Makes the work queued next on `stream` wait until the device reaches the mark.
  void make_wait(CUstream stream) const;
  /// Blocks until the device reaches the mark; throws what the device reported (a fault).
  void synchronize(const char* op) const;
  /// Whether the device has reached the mark (true after a fault too); never blocks.
  bool reached() const;

 private:
  CudaDevice& device_;
  CUevent event_ = nullptr;
};

/// A block of a CUDA device's memory owned by a buffer, allocated for work on lazuli stream
/// `stream` of the device (or kUploadStream, kCollectiveStream), which writes it; or memory of
/// another library's that the buffer borrows (DLPack), which lazuli only reads.
class CudaMemory final : public memory::DeviceMemory {
 public:
  CudaMemory(CudaDevice& device, int64_t bytes, int stream, const std::string& op);
  /// Borrows the `bytes` at `address`, written already; `release` hands them back.
  CudaMemory(CudaDevice& device, uint64_t address, int64_t bytes, std::function<void()> release);
  /// Gives the block back to the allocator, which reuses it once the reads queued on other
  /// streams have run; borrowed memory is handed back once they have run (waiting for them).
  ~CudaMemory() override;

  uint64_t address() const override { return address_; }
  int device_index() const override;
  void copy_to_host(void* host, int64_t bytes) const override;
  void wait() const override;
  bool is_written() const override;

  /// The writes queued on the memory's stream end at `written`; shared by a launch's outputs.
  void set_written(std::shared_ptr<CudaEvent> written);
  /// Called before queuing work that reads the memory on stream `stream` of its device:
  /// that stream waits for the writes, and the block is not reused before the read has run.
  void read_on(int stream) const;
  /// Marks reads another library queued on `stream`, a CUDA stream of the device outside
  /// lazuli's: the block is not reused (or handed back) before the work queued there until now
  /// has run.
  void read_elsewhere(CUstream stream) const;

 private:
  CudaDevice& device_;
  const int64_t bytes_;
  const int stream_;
  const uint64_t address_;
  const std::function<void()> release_;  // of borrowed memory; else empty
  mutable std::mutex mutex_;
  std::shared_ptr<CudaEvent> written_;         // null: nothing queued writes it
  mutable std::bitset<kCudaStreams> readers_;  // other streams that read it; by mutex_
  mutable std::vector<std::shared_ptr<CudaEvent>> foreign_reads_;  // read_elsewhere's; by mutex_
};

/// Marks `outputs` as written by the work queued on `stream` so far: one event for a launch.
void mark_written(CudaDevice& device, int stream, const std::vector<CudaMemory*>& outputs);

/// The device address of `buffer`, read by the work queued next on `stream` (for `op`): its own
/// memory when it is on `device`, else the copy the buffer keeps there, uploaded on the upload
/// stream at its first use on this device (memory::Buffer::device_copy).
uint64_t read_address(CudaDevice& device, int stream, const memory::Buffer& buffer,
                      const std::string& op);

/// The device address of `buffer` on `device` (as read_address finds it) once the device has
/// written it: for another library to read, outside lazuli's streams. Blocks; throws what the
/// device reported.
uint64_t written_address(CudaDevice& device, const memory::Buffer& buffer, const std::string& op);

/// CudaMemory::read_elsewhere of the memory holding `buffer`'s elements on `device`.
void read_elsewhere(CudaDevice& device, const memory::Buffer& buffer, CUstream stream);

/// A copy, in memory of `device` for lazuli's kernels, of the `bytes` at `address` of another
/// library's, made on the upload stream and waited for (for `op`).
std::unique_ptr<CudaMemory> copy_device_memory(CudaDevice& device, uint64_t address, int64_t bytes,
                                               const std::string& op);

}  // namespace lz::runtime::cuda
