#include "tests/cuda_emulation/stream.h"

namespace lz::cuda_emulation {

Stream::Stream(Context& context) : context_(context), worker_([this] { work(); }) {}

Stream::~Stream() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  worker_.join();
}

void Stream::enqueue(std::function<void()> operation) {
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(std::move(operation));
    ++queued_;
  }
  changed_.notify_all();
}

void Stream::synchronize() {
  std::unique_lock lock(mutex_);
  const uint64_t target = queued_;
  changed_.wait(lock, [&] { return finished_ >= target; });
}

void Stream::work() {
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and everything queued has run
    std::function<void()> operation = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    operation();
    operation = nullptr;  // what it holds goes before the operation counts as finished
    lock.lock();
    ++finished_;
    changed_.notify_all();
  }
}

uint64_t Event::begin_record() {
  std::lock_guard lock(mutex_);
  return ++begun_;
}

void Event::complete(uint64_t record) {
  {
    std::lock_guard lock(mutex_);
    // Records on two streams may be reached out of order; the later one decides.
    if (record < reached_) return;
    reached_ = record;
    time_ = std::chrono::steady_clock::now();
  }
  changed_.notify_all();
}

uint64_t Event::last_record() {
  std::lock_guard lock(mutex_);
  return begun_;
}

bool Event::is_complete() {
  std::lock_guard lock(mutex_);
  return reached_ >= begun_;
}

void Event::wait_for(uint64_t record) {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return reached_ >= record; });
}

bool Event::completion_time(std::chrono::steady_clock::time_point& time) {
  std::lock_guard lock(mutex_);
  if (begun_ == 0 || reached_ < begun_) return false;
  time = time_;
  return true;
}

}  // namespace lz::cuda_emulation
