#include "gil_released.h"

#include <nanobind/nanobind.h>

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

/// Whether a thread other than this one still has a Python thread state: a daemon thread,
/// whose objects (a tensor it waits on, its frame's) stay held until the process ends, which
/// nanobind would report as leaked. Called with the GIL.
bool other_threads_remain() {
  int threads = 0;
  for (PyThreadState* state = PyInterpreterState_ThreadHead(PyInterpreterState_Get());
       state != nullptr; state = PyThreadState_Next(state)) {
    ++threads;
  }
  return threads > 1;
}

/// Whether this thread must not take the GIL back: the exit began on another thread. Called
/// with exit_mutex held.
bool kept_from_the_gil() { return exiting && std::this_thread::get_id() != exiting_thread; }

}  // namespace

GilReleased::GilReleased() : state_(PyEval_SaveThread()) {
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
  if (other_threads_remain()) nanobind::set_leak_warnings(false);
}

}  // namespace lz::python
