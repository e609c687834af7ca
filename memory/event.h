// A point in a stream's work that others wait for: set once, when the work before it is done.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <vector>

namespace lz::memory {

/// Set exactly once by the stream that reaches it; any thread may poll it, wait for it, or ask
/// for a callback. Everything the setting thread wrote before set() is visible to a thread that
/// saw is_set() or returned from wait().
class Event {
 public:
  Event() = default;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  bool is_set() const { return set_.load(std::memory_order_acquire); }
  /// Blocks until set, or until this thread's wait check throws (memory/wait_check.h).
  void wait() const;
  /// Marks the event set, wakes its waiters, then runs the callbacks on this thread.
  void set();
  /// Runs `callback` once the event is set: at once on this thread when it already is.
  void on_set(std::function<void()> callback);

 private:
  std::atomic<bool> set_{false};
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  std::vector<std::function<void()>> callbacks_;  // guarded by mutex_, run by set()
};

}  // namespace lz::memory
