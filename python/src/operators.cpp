// Slots, not `__add__` methods: Python calls a type's slot directly, where a method costs a
// lookup in the type and nanobind's overload dispatch on every `x + 1` (about a sixth of
// recording an op from Python). Python makes `__add__`, `__radd__`, `__eq__`, ... from the
// slots, so both spellings work. nanobind does not call these functions, so they translate
// C++ exceptions themselves (raise_current_exception).
#include "operators.h"

#include <nanobind/nanobind.h>

#include "caller_location.h"
#include "conversions.h"
#include "errors.h"

namespace lz::python {
namespace {

/// The Tensor a unary slot was called on: Python calls a type's unary slots on its instances.
const Tensor& self_tensor(PyObject* object) { return *tensor_in(object); }

/// `tensor op other`, or NotImplemented when `other` is no operand.
template <class Op>
nb::object forward(const Tensor& tensor, nb::handle other, Op op) {
  const std::source_location loc = caller_location();
  return with_operand(other,
                      [&](const Operand& operand) { return op(Traced(tensor, loc), operand); });
}

/// `other op tensor` when `other` is no tensor (Python calls the right operand's slot only when
/// the left one's does not know tensors), or NotImplemented when `other` is no operand.
template <class Op>
nb::object reflected(const Tensor& tensor, nb::handle other, Op op) {
  const std::source_location loc = caller_location();
  ScalarOperand number(0);
  if (scalar_from(other, number)) return tensor_object(op(number, Traced(tensor, loc)));
  if (is_array_like(other)) {
    const Tensor left = tensor_from_array_like(other);
    return tensor_object(op(Traced(left, loc), Operand(tensor)));
  }
  return nb::borrow(Py_NotImplemented);
}

/// A binary slot: Python passes the operands in their order, the tensor on either side.
template <class Op>
PyObject* binary_slot(PyObject* left, PyObject* right) noexcept try {
  if (const Tensor* tensor = tensor_in(left)) return forward(*tensor, right, Op{}).release().ptr();
  if (const Tensor* tensor = tensor_in(right)) {
    return reflected(*tensor, left, Op{}).release().ptr();
  }
  Py_RETURN_NOTIMPLEMENTED;
} catch (...) {
  return raise_current_exception();
}

struct Add {
  Tensor operator()(auto a, const auto& b) const { return a + b; }
};
struct Subtract {
  Tensor operator()(auto a, const auto& b) const { return a - b; }
};
struct Multiply {
  Tensor operator()(auto a, const auto& b) const { return a * b; }
};
struct Divide {
  Tensor operator()(auto a, const auto& b) const { return a / b; }
};
struct Power {
  Tensor operator()(Traced a, const Operand& b) const { return lz::pow(a.tensor, b, a.where); }
  Tensor operator()(ScalarOperand a, Traced b) const { return lz::pow(a, b.tensor, b.where); }
};

/// pow(base, exponent) and `**`; a modulus (pow's third argument) is not taken.
PyObject* power_slot(PyObject* base, PyObject* exponent, PyObject* modulus) noexcept {
  if (modulus != Py_None) Py_RETURN_NOTIMPLEMENTED;
  return binary_slot<Power>(base, exponent);
}

/// `a @ b`: the other operand becomes a tensor (lazuli.asarray) or raises.
PyObject* matmul_slot(PyObject* left, PyObject* right) noexcept try {
  const std::source_location loc = caller_location();
  if (const Tensor* a = tensor_in(left)) {
    return tensor_object(lz::matmul(*a, as_tensor(right), loc)).release().ptr();
  }
  const Tensor& b = self_tensor(right);
  return tensor_object(lz::matmul(tensor_from_array_like(left), b, loc)).release().ptr();
} catch (...) {
  return raise_current_exception();
}

/// ==, !=, <, <=, >, >=: tensors of bools. Python passes the tensor first, swapping the
/// comparison for `number < tensor`. `x == None` is False: NotImplemented from both sides.
PyObject* richcompare_slot(PyObject* self, PyObject* other, int comparison) noexcept try {
  const Tensor* tensor = tensor_in(self);
  if (tensor == nullptr) Py_RETURN_NOTIMPLEMENTED;
  const auto compare = [&](auto op) { return forward(*tensor, other, op).release().ptr(); };
  switch (comparison) {
    case Py_EQ: return compare([](Traced a, const Operand& b) { return a == b; });
    case Py_NE: return compare([](Traced a, const Operand& b) { return a != b; });
    case Py_LT: return compare([](Traced a, const Operand& b) { return a < b; });
    case Py_LE: return compare([](Traced a, const Operand& b) { return a <= b; });
    case Py_GT: return compare([](Traced a, const Operand& b) { return a > b; });
    case Py_GE: return compare([](Traced a, const Operand& b) { return a >= b; });
    default: Py_RETURN_NOTIMPLEMENTED;
  }
} catch (...) {
  return raise_current_exception();
}

PyObject* negative_slot(PyObject* self) noexcept try {
  return tensor_object(-Traced(self_tensor(self), caller_location())).release().ptr();
} catch (...) {
  return raise_current_exception();
}

PyObject* absolute_slot(PyObject* self) noexcept try {
  return tensor_object(lz::abs(self_tensor(self), caller_location())).release().ptr();
} catch (...) {
  return raise_current_exception();
}

/// `+x` is x: tensors are immutable.
PyObject* positive_slot(PyObject* self) noexcept {
  Py_INCREF(self);
  return self;
}

template <class F>
void* slot(F* function) {
  return reinterpret_cast<void*>(function);
}

}  // namespace

const PyType_Slot* tensor_operator_slots() {
  static const PyType_Slot slots[] = {
      {Py_nb_add, slot(binary_slot<Add>)},
      {Py_nb_subtract, slot(binary_slot<Subtract>)},
      {Py_nb_multiply, slot(binary_slot<Multiply>)},
      {Py_nb_true_divide, slot(binary_slot<Divide>)},
      {Py_nb_power, slot(power_slot)},
      {Py_nb_matrix_multiply, slot(matmul_slot)},
      {Py_nb_negative, slot(negative_slot)},
      {Py_nb_positive, slot(positive_slot)},
      {Py_nb_absolute, slot(absolute_slot)},
      {Py_tp_richcompare, slot(richcompare_slot)},
      {0, nullptr},
  };
  return slots;
}

}  // namespace lz::python
