// A stream: a FIFO of work that one worker thread runs in order, as a CUDA stream runs kernels.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace lz::runtime {

/// Tasks submitted to one stream run one at a time, in submission order; tasks of different
/// streams run concurrently. A task must not throw: it stores its failures where its results go.
class Stream {
 public:
  /// `name` names the worker's track in traces and logs ("stream cpu:1"). Throws lz::Error when
  /// the worker thread cannot be started.
  explicit Stream(std::string name);
  /// Runs what is queued, then stops the worker.
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  /// Queues `task` behind everything submitted before.
  void submit(std::function<void()> task);
  /// Claims the stream for the calling thread when it is idle with nothing queued: the caller
  /// then runs one task itself and calls release(). That saves the hand-off to the worker for a
  /// caller that would only wait for the result. Work submitted meanwhile queues behind it.
  bool claim_if_idle();
  /// Ends a claim; the worker resumes with what was queued meanwhile.
  void release();
  /// Blocks until everything submitted before the call has run. Called from the thread that is
  /// running one of the stream's tasks (its worker, or a caller that claimed it and was then
  /// interrupted, say by a signal handler that exits), it returns at once: that thread cannot
  /// wait for its own task.
  void synchronize();
  /// Tasks queued or running.
  int64_t pending();

  const std::string& name() const { return name_; }

 private:
  void work();

  const std::string name_;
  std::mutex mutex_;
  std::condition_variable work_available_;
  std::condition_variable became_idle_;
  std::deque<std::function<void()>> queue_;  // guarded by mutex_
  bool busy_ = false;                        // a task runs (on the worker or a caller)
  std::thread::id running_on_;               // the thread running it, while busy_
  bool stopping_ = false;
  std::thread worker_;  // last: started once the members above exist
};

}  // namespace lz::runtime
