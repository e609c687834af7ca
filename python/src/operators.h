// lazuli.Tensor's operators (+ - * / ** @, the comparisons, unary - + abs) as type slots: Python's
// number protocol and rich comparison.
#pragma once

#include <Python.h>

namespace lz::python {

/// The slots lazuli.Tensor is created with (nanobind's type_slots), ended by {0, nullptr}.
const PyType_Slot* tensor_operator_slots();

}  // namespace lz::python
