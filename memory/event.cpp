#include "memory/event.h"

#include <cstdio>
#include <exception>

#include "memory/wait_check.h"

namespace lz::memory {
namespace {

void run_callback(const std::function<void()>& callback) {
  try {
    callback();
  } catch (const std::exception& error) {
    std::fprintf(stderr, "[lazuli] an event callback threw and was dropped: %s\n", error.what());
  } catch (...) {
    std::fprintf(stderr, "[lazuli] an event callback threw and was dropped\n");
  }
}

}  // namespace

void Event::wait() const {
  if (is_set()) return;
  std::unique_lock lock(mutex_);
  wait_until(lock, changed_, [this] { return set_.load(std::memory_order_acquire); });
}

WaitCheck& thread_wait_check() {
  thread_local WaitCheck installed;
  return installed;
}

void Event::set() {
  std::vector<std::function<void()>> callbacks;
  {
    std::lock_guard lock(mutex_);
    set_.store(true, std::memory_order_release);
    callbacks.swap(callbacks_);
  }
  changed_.notify_all();
  for (const auto& callback : callbacks) run_callback(callback);
}

void Event::on_set(std::function<void()> callback) {
  {
    std::lock_guard lock(mutex_);
    if (!set_.load(std::memory_order_relaxed)) {
      callbacks_.push_back(std::move(callback));
      return;
    }
  }
  run_callback(callback);
}

}  // namespace lz::memory
