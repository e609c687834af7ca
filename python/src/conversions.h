// What every binding file shares: Python values as lazuli's (shapes, axes, dtypes, devices,
// number operands), lazuli's values as Python's (tuples, numpy arrays), and Python references
// that lazuli's threads may drop without the GIL.
#pragma once

#include <nanobind/nanobind.h>

#include <source_location>
#include <string>
#include <vector>

#include "lazuli/lazuli.h"

namespace lz::python {

namespace nb = nanobind;

/// A shape as a tuple of ints, as numpy's `.shape`.
nb::tuple shape_tuple(const Shape& shape);
/// An int or a sequence of ints as a shape.
Shape shape_from(nb::handle value);
/// None (every axis), an int or a sequence of ints as reduction axes.
Axes axes_from(nb::handle value);
/// A lazuli dtype: lz.float32, its name ("float32") or a numpy dtype of the same name.
DType dtype_from(nb::handle value);
/// The default device for None, else an lz.Device or its name ("cuda:0").
Device device_from(nb::handle value);

/// Calls `f` with `value` as an lz::Operand: a Tensor, or a Python bool, int or float (a numpy
/// scalar or array becomes a tensor first). Returns NotImplemented for anything else, so that
/// Python tries the other operand's method.
template <class F>
nb::object with_operand(nb::handle value, F&& f);

/// A tensor, or anything lazuli.asarray takes, as one.
Tensor as_tensor(nb::handle value);

/// The Tensor `value` holds, or nullptr when it is no lazuli.Tensor (a TypeError for one made by
/// Tensor.__new__, which holds none): nb::isinstance and nb::cast without their search for the
/// type, which every recorded op would pay.
const Tensor* tensor_in(nb::handle value);

/// `tensor` as a new lazuli.Tensor object, as nb::cast makes it, without the search for the type.
nb::object tensor_object(Tensor&& tensor);

/// `item` as a Tensor; a TypeError naming its type when it is none (not nanobind's cast error,
/// which Python would see as a RuntimeError).
Tensor tensor_item(nb::handle item, const char* what);

/// The items of a Python iterable, each through tensor_item.
std::vector<Tensor> tensor_list(nb::handle value, const char* what);

/// f(*params) as the C++ scalar function that lz::grad takes: called on the recording thread,
/// with the GIL held. A result that is no Tensor is an "[grad]" error naming its type.
ScalarFunction scalar_function(nb::handle f);

/// A Python int or an integer scalar such as numpy's np.int64 (not an array).
bool is_single_integer(nb::handle value);

/// Calls f(std::type_identity<T>{}) with T the C++ element type of `dtype`.
template <class F>
decltype(auto) visit_element(DType dtype, F&& f) {
  switch (dtype) {
    case DType::Float32: return f(std::type_identity<float>{});
    case DType::Float64: return f(std::type_identity<double>{});
    case DType::Int32: return f(std::type_identity<int32_t>{});
    case DType::Int64: return f(std::type_identity<int64_t>{});
    case DType::Bool: break;
  }
  return f(std::type_identity<bool>{});
}

/// `value` (a Python bool, int or float) as a C++ number operand; false when it is none.
bool scalar_from(nb::handle value, ScalarOperand& out);

/// The tensor's values as a read-only numpy array over lazuli's own buffer (no copy); the array
/// keeps the tensor alive. Blocks, with the GIL released, until the value is computed.
nb::object to_numpy(const Tensor& tensor, std::source_location loc);
/// A tensor over the memory of `buffer` (an object with the buffer protocol, C-contiguous and
/// aligned, of a lazuli dtype, a numpy array most often), without a copy: the object is held
/// until lazuli lets go of its memory. Throws a Python TypeError (nb::type_error) when `buffer`
/// has no such memory; lazuli's Python layer then copies it.
Tensor borrow_buffer(nb::handle buffer, Device device, std::source_location loc);

/// A CUDA tensor's device memory, or with `copy` a copy the consumer may write, as an array
/// object with __dlpack__ (nanobind's), which keeps the memory alive, read by the consumer on
/// `reader_stream` (lz::cuda::device_elements, device_elements_copy); a blocking point, waiting
/// with the GIL released.
nb::object cuda_dlpack_array(const Tensor& tensor, uint64_t reader_stream, bool copy,
                             std::source_location loc);

/// A tensor over the device memory of `array`, a C-contiguous CUDA array with __dlpack__ of a
/// lazuli dtype, without a copy; the imported memory stays the tensor's until lazuli lets go.
Tensor borrow_cuda_array(nb::handle array, std::source_location loc);

/// A reference to a Python object that any thread may drop: one holding the GIL releases it at
/// once, any other hands it to the interpreter's main thread (Py_AddPendingCall).
class SharedReference {
 public:
  explicit SharedReference(nb::handle object);
  SharedReference(const SharedReference&) = delete;
  SharedReference& operator=(const SharedReference&) = delete;
  ~SharedReference();
  nb::handle get() const { return object_; }

 private:
  PyObject* object_;
};

// ---- Implementation of with_operand ------------------------------------------------------------

/// A numpy array, numpy scalar, list or tuple: what lazuli.asarray takes besides tensors.
bool is_array_like(nb::handle value);
/// lazuli.asarray(value).
Tensor tensor_from_array_like(nb::handle value);

template <class F>
nb::object with_operand(nb::handle value, F&& f) {
  ScalarOperand scalar(0);
  if (scalar_from(value, scalar)) {  // first: the `1` of `x + 1`
    switch (scalar.category) {
      case ScalarOperand::Category::Bool: return tensor_object(f(Operand(scalar.integer != 0)));
      case ScalarOperand::Category::Integer: return tensor_object(f(Operand(scalar.integer)));
      case ScalarOperand::Category::Floating: return tensor_object(f(Operand(scalar.floating)));
    }
  }
  if (const Tensor* tensor = tensor_in(value)) return tensor_object(f(Operand(*tensor)));
  if (is_array_like(value)) {
    const Tensor tensor = tensor_from_array_like(value);
    return tensor_object(f(Operand(tensor)));
  }
  return nb::borrow(Py_NotImplemented);
}

}  // namespace lz::python
