// Waits a program may interrupt (lz::InterruptibleWaits): while a check is installed on a thread,
// that thread's waits for lazuli's work wake every slice to call it, and what it throws leaves
// the wait. The work waited for goes on.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>

namespace lz::memory {

struct WaitCheck {
  const std::function<void()>* check = nullptr;  // null: waits are not interrupted
  std::chrono::milliseconds slice{50};
};

/// The check of this thread's waits.
WaitCheck& thread_wait_check();

/// Suspends this thread's check while alive: for work the thread does for others (a launch it
/// runs itself), which an interruption must not leave half done.
class UninterruptedScope {
 public:
  UninterruptedScope() : suspended_(thread_wait_check()) { thread_wait_check() = {}; }
  ~UninterruptedScope() { thread_wait_check() = suspended_; }
  UninterruptedScope(const UninterruptedScope&) = delete;
  UninterruptedScope& operator=(const UninterruptedScope&) = delete;

 private:
  WaitCheck suspended_;
};

/// Waits on `changed`, `lock` held, until `done()`, calling this thread's check between slices;
/// an exception it throws leaves with `lock` released.
template <class Done>
void wait_until(std::unique_lock<std::mutex>& lock, std::condition_variable& changed, Done done) {
  const WaitCheck& installed = thread_wait_check();
  if (installed.check == nullptr) {
    changed.wait(lock, done);
    return;
  }
  while (!changed.wait_for(lock, installed.slice, done)) {
    lock.unlock();
    (*installed.check)();
    lock.lock();
  }
}

}  // namespace lz::memory
