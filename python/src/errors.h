// lazuli's C++ exceptions as Python's: lz::Error as lazuli.Error (a ValueError) or
// lazuli.DTypeError (also a TypeError), and the rest as nanobind raises them.
#pragma once

#include <nanobind/nanobind.h>

namespace lz::python {

/// Sets the Python error for the C++ exception being handled (call it in a `catch (...)`) and
/// returns nullptr, the error result of a Python C function: what the type slots that nanobind
/// does not call (operators.cpp) do with the exceptions nanobind would translate for them, with
/// nanobind's own mapping and lazuli's. A translator registered with nanobind later does not
/// reach them.
PyObject* raise_current_exception() noexcept;

}  // namespace lz::python
