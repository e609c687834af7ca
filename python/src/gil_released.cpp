#include "gil_released.h"

#include <nanobind/nanobind.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

namespace lz::python {
namespace {

// Taken by a wait from the moment it decides to take the GIL back until it has it, and by
// mark_interpreter_exiting (without the GIL) to set `exiting`: so every wait that decided to
// take the GIL has it before the exit goes on, and every later one sees `exiting`.
std::mutex exit_mutex;
bool exiting = false;
std::thread::id exiting_thread;
std::atomic<int> waits_without_gil{0};

/// Whether this thread must not take the GIL back: the exit began on another thread. Called
/// with exit_mutex held.
bool kept_from_the_gil() { return exiting && std::this_thread::get_id() != exiting_thread; }

}  // namespace

GilReleased::GilReleased() : state_(PyEval_SaveThread()) {
  waits_without_gil.fetch_add(1, std::memory_order_relaxed);
}

GilReleased::~GilReleased() {
  std::unique_lock lock(exit_mutex);
  if (kept_from_the_gil()) {
    lock.unlock();
    for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
  }
  PyEval_RestoreThread(state_);
  waits_without_gil.fetch_sub(1, std::memory_order_relaxed);
}

void mark_interpreter_exiting() {
  PyThreadState* state = PyEval_SaveThread();
  {
    std::lock_guard lock(exit_mutex);
    exiting = true;
    exiting_thread = std::this_thread::get_id();
  }
  PyEval_RestoreThread(state);
  // A thread still waiting holds its tensors until the process ends: nanobind would report
  // them as leaked.
  if (waits_without_gil.load(std::memory_order_relaxed) > 0) nanobind::set_leak_warnings(false);
}

}  // namespace lz::python
