// A CUDA stream of the emulation: a host thread running the stream's operations (launches,
// copies, memsets, event records and waits, cuBLAS products) one after another in the order
// they were queued, while the thread that queued them goes on, as on a GPU. A caller that reads
// a result before synchronizing reads it before it was written; memory reused before the work
// reading it ran is overwritten under it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace lz::cuda_emulation {

struct Context;

class Stream {
 public:
  explicit Stream(Context& context);
  /// Runs what is still queued, then stops the worker.
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  Context& context() const { return context_; }

  /// Queues `operation` after everything queued before.
  void enqueue(std::function<void()> operation);
  /// Blocks until everything queued before the call has run.
  void synchronize();

 private:
  void work();

  Context& context_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::function<void()>> queue_;  // guarded by mutex_
  uint64_t queued_ = 0;                      // operations ever queued; guarded by mutex_
  uint64_t finished_ = 0;                    // operations run; guarded by mutex_
  bool stopping_ = false;                    // guarded by mutex_
  std::thread worker_;
};

/// A CUDA event: each cuEventRecord queues a record on a stream; the event is complete once the
/// last record queued has run.
class Event {
 public:
  static constexpr unsigned kDisableTiming = 2;  // CU_EVENT_DISABLE_TIMING

  explicit Event(unsigned flags) : flags_(flags) {}

  unsigned flags() const { return flags_; }
  /// A new record: the number that complete() gets when it has run on its stream.
  uint64_t begin_record();
  /// Runs on the stream: record `record` has been reached.
  void complete(uint64_t record);
  /// The last record begun, as a number for wait_for.
  uint64_t last_record();
  /// Whether every record begun has been reached (true for an event never recorded).
  bool is_complete();
  /// Blocks until record `record` has been reached.
  void wait_for(uint64_t record);
  /// When the last record was reached; false when it has not been, or none was begun.
  bool completion_time(std::chrono::steady_clock::time_point& time);

 private:
  const unsigned flags_;
  std::mutex mutex_;
  std::condition_variable changed_;
  uint64_t begun_ = 0;    // guarded by mutex_
  uint64_t reached_ = 0;  // guarded by mutex_
  std::chrono::steady_clock::time_point time_;
};

}  // namespace lz::cuda_emulation
