#include "runtime/stream.h"

#include <system_error>

#include "lazuli/error.h"
#include "memory/wait_check.h"
#include "support/trace.h"

namespace lz::runtime {

namespace {

/// The worker thread of stream `name`; lz::Error when the system refuses to start it.
std::thread start_worker(const std::string& name, std::function<void()> work) {
  try {
    return std::thread(std::move(work));
  } catch (const std::system_error& error) {
    throw Error("[stream] cannot start the thread of " + name + ": " + error.what() +
                " (the process or user may be at its thread limit, RLIMIT_NPROC)");
  }
}

}  // namespace

Stream::Stream(std::string name)
    : name_(std::move(name)), worker_(start_worker(name_, [this] { work(); })) {}

Stream::~Stream() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  work_available_.notify_all();
  worker_.join();
}

void Stream::submit(std::function<void()> task) {
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(std::move(task));
  }
  work_available_.notify_one();
}

bool Stream::claim_if_idle() {
  std::lock_guard lock(mutex_);
  if (busy_ || !queue_.empty()) return false;
  busy_ = true;
  running_on_ = std::this_thread::get_id();
  return true;
}

void Stream::release() {
  bool queued = false;
  {
    std::lock_guard lock(mutex_);
    busy_ = false;
    running_on_ = {};
    queued = !queue_.empty();
  }
  // Waking the worker when nothing was queued would cost it a futex round trip for nothing.
  if (queued) work_available_.notify_one();
  became_idle_.notify_all();
}

void Stream::synchronize() {
  std::unique_lock lock(mutex_);
  if (busy_ && running_on_ == std::this_thread::get_id()) return;
  memory::wait_until(lock, became_idle_, [this] { return !busy_ && queue_.empty(); });
}

int64_t Stream::pending() {
  std::lock_guard lock(mutex_);
  return static_cast<int64_t>(queue_.size()) + (busy_ ? 1 : 0);
}

void Stream::work() {
  support::trace::name_thread(name_);
  std::unique_lock lock(mutex_);
  while (true) {
    work_available_.wait(lock, [this] { return !busy_ && (stopping_ || !queue_.empty()); });
    if (queue_.empty()) return;  // stopping, and everything queued has run
    std::function<void()> task = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    running_on_ = std::this_thread::get_id();
    lock.unlock();
    task();
    task = nullptr;  // its captures (buffers, graphs) are released before the stream is idle
    lock.lock();
    busy_ = false;
    running_on_ = {};
    if (queue_.empty()) became_idle_.notify_all();
  }
}

}  // namespace lz::runtime
