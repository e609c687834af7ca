// Waiting without the GIL, as nanobind::gil_scoped_release, but interruptible and safe at
// interpreter exit.
//
// A wait checks for signals (Ctrl-C) every 50 ms, with the GIL taken for the check: a handler's
// exception (KeyboardInterrupt) leaves the wait and is raised by the call; the work goes on.
//
// Python ends a thread that asks for the GIL once the interpreter is finalizing by unwinding
// its stack, and the C++ frames on the way (a destructor, nanobind's dispatch) turn that into
// std::terminate: a daemon thread still waiting on a tensor when the program ends would abort
// the process. So a wait that ends after the exit began never takes the GIL back: its thread
// sleeps until the process is gone, and the objects it holds are left to the exit.
#pragma once

#include <Python.h>

#include <lazuli/tensor.h>

#include <optional>

namespace lz::python {

class GilReleased {
 public:
  GilReleased();
  ~GilReleased();
  GilReleased(const GilReleased&) = delete;
  GilReleased& operator=(const GilReleased&) = delete;

 private:
  /// Runs the signal handlers with the GIL; throws PythonErrorSet when one raised.
  void check_signals();

  PyThreadState* state_;
  std::optional<InterruptibleWaits> interruptible_;
};

/// Thrown by a wait a signal handler interrupted: the Python error it raised is set, for the
/// call to raise (errors.cpp translates it to nothing more).
struct PythonErrorSet {};

/// Called by the package's last exit handler, with the GIL held: from here on, a wait of another
/// thread that ends keeps its thread asleep. The calling thread's own waits still return, as it
/// finalizes the interpreter.
void mark_interpreter_exiting();

}  // namespace lz::python
