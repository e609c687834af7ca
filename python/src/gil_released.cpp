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
  interruptible_.emplace([this] { check_signals(); });
}

GilReleased::~GilReleased() {
  interruptible_.reset();
  std::unique_lock lock(exit_mutex);
  if (kept_from_the_gil()) {
    lock.unlock();
    for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
  }
  PyEval_RestoreThread(state_);
  waits_without_gil.fetch_sub(1, std::memory_order_relaxed);
}

void GilReleased::check_signals() {
  std::unique_lock lock(exit_mutex);
  if (kept_from_the_gil()) return;  // the wait goes on; the destructor keeps it asleep
  PyEval_RestoreThread(state_);
  lock.unlock();
  // Python runs the handlers on its main thread only; elsewhere this returns 0 at once.
  const bool raised = PyErr_CheckSignals() != 0;
  state_ = PyEval_SaveThread();  // the error, if any, stays set on this thread's state
  if (raised) throw PythonErrorSet{};
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
