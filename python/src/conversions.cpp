#include "conversions.h"

#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>  // nb::cast<std::string> in dtype_from, device_from, messages

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "gil_released.h"

namespace lz::python {
namespace {

/// Work that needs the GIL, handed over by threads without it (lazuli's workers letting go of a
/// borrowed array) and run by the interpreter's main thread at its next opportunity.
class GilTasks {
 public:
  void add(std::function<void()> task) {
    {
      std::lock_guard lock(mutex_);
      tasks_.push_back(std::move(task));
    }
    // Fails only when the interpreter's queue is full; the task then waits for the next call.
    Py_AddPendingCall(&GilTasks::run_all, this);
  }

 private:
  static int run_all(void* self) {
    auto* pending = static_cast<GilTasks*>(self);
    std::vector<std::function<void()>> tasks;
    {
      std::lock_guard lock(pending->mutex_);
      tasks.swap(pending->tasks_);
    }
    for (const auto& task : tasks) task();
    return 0;
  }

  std::mutex mutex_;
  std::vector<std::function<void()>> tasks_;
};

/// Runs `task` now when this thread holds the GIL, else on the main thread; never once the
/// interpreter is gone (whatever it would release went with it).
void with_gil(std::function<void()> task) {
  static auto* pending = new GilTasks;  // used by lazuli's threads until the very end
  if (!Py_IsInitialized()) return;
  if (PyGILState_Check()) {
    task();
  } else {
    pending->add(std::move(task));
  }
}

template <class T>
nb::object numpy_array_of(const Tensor& tensor, std::span<const T> values) {
  std::vector<size_t> shape;
  for (int64_t extent : tensor.shape()) shape.push_back(static_cast<size_t>(extent));
  // An empty tensor may hold no buffer; numpy still wants an address.
  static const T kNoElements{};
  const T* data = values.empty() ? &kNoElements : values.data();
  auto* holder = new Tensor(tensor);
  nb::capsule owner(holder, [](void* held) noexcept { delete static_cast<Tensor*>(held); });
  return nb::ndarray<nb::numpy, const T>(data, shape.size(), shape.data(), owner).cast();
}

/// The lazuli dtype of a buffer-protocol format character, if any.
std::optional<DType> dtype_of_format(const char* format, Py_ssize_t item_size) {
  if (format == nullptr) return std::nullopt;
  if (*format == '<' || *format == '=' || *format == '@') ++format;
  if (format[0] == '\0' || format[1] != '\0') return std::nullopt;
  switch (format[0]) {
    case 'f': return item_size == 4 ? std::optional(float32) : std::nullopt;
    case 'd': return item_size == 8 ? std::optional(float64) : std::nullopt;
    case '?': return item_size == 1 ? std::optional(bool_) : std::nullopt;
    case 'i':
    case 'l':
    case 'q':
      if (item_size == 4) return int32;
      if (item_size == 8) return int64;
      return std::nullopt;
    default: return std::nullopt;
  }
}

}  // namespace

SharedReference::SharedReference(nb::handle object) : object_(object.ptr()) { Py_XINCREF(object_); }

SharedReference::~SharedReference() {
  if (object_ == nullptr) return;
  with_gil([object = object_] { Py_DECREF(object); });
}

nb::tuple shape_tuple(const Shape& shape) {
  nb::list items;
  for (int64_t extent : shape) items.append(extent);
  return nb::tuple(items);
}

Tensor as_tensor(nb::handle value) {
  if (const Tensor* tensor = tensor_in(value)) return *tensor;
  return tensor_from_array_like(value);
}

Tensor tensor_item(nb::handle item, const char* what) {
  if (!nb::isinstance<Tensor>(item)) {
    throw nb::type_error((std::string(what) + " must be lazuli.Tensor objects, got " +
                          nb::cast<std::string>(nb::str(item.type().attr("__name__"))) +
                          " (lazuli.asarray makes one)")
                             .c_str());
  }
  return nb::cast<Tensor>(item);
}

std::vector<Tensor> tensor_list(nb::handle value, const char* what) {
  std::vector<Tensor> tensors;
  for (nb::handle item : value) tensors.push_back(tensor_item(item, what));
  return tensors;
}

ScalarFunction scalar_function(nb::handle f) {
  return [f](const std::vector<Tensor>& params) {
    nb::list arguments;
    for (const Tensor& param : params) arguments.append(nb::cast(param));
    nb::object result = f(*nb::tuple(arguments));
    if (!nb::isinstance<Tensor>(result)) {
      throw Error("[grad] f returned " + nb::cast<std::string>(nb::repr(result.type())) +
                  ", not a lazuli.Tensor holding a scalar");
    }
    return nb::cast<Tensor>(result);
  };
}

// numpy's integer scalars have __index__ but, unlike arrays, are no sequences.
bool is_single_integer(nb::handle value) {
  return PyLong_Check(value.ptr()) ||
         (PyIndex_Check(value.ptr()) && !PySequence_Check(value.ptr()));
}

Shape shape_from(nb::handle value) {
  if (is_single_integer(value)) return {nb::cast<int64_t>(nb::int_(value))};
  Shape shape;
  for (nb::handle extent : value) shape.push_back(nb::cast<int64_t>(extent));
  return shape;
}

Axes axes_from(nb::handle value) {
  if (value.is_none()) return {};
  if (is_single_integer(value)) return Axes(nb::cast<int>(nb::int_(value)));
  std::vector<int> axes;
  for (nb::handle axis : value) axes.push_back(nb::cast<int>(axis));
  return Axes(std::move(axes));
}

DType dtype_from(nb::handle value) {
  if (nb::isinstance<DType>(value)) return nb::cast<DType>(value);
  // A name, a numpy dtype or a numpy scalar type: each names itself as numpy does.
  std::string name;
  if (nb::isinstance<nb::str>(value)) {
    name = nb::cast<std::string>(value);
  } else if (nb::hasattr(value, "__name__")) {
    name = nb::cast<std::string>(value.attr("__name__"));  // numpy.float32, float, int, bool
  } else {
    name = nb::cast<std::string>(nb::str(value));  // numpy.dtype('float32')
  }
  if (name == "float32") return float32;
  if (name == "float64" || name == "float") return float64;
  if (name == "int32") return int32;
  if (name == "int64" || name == "int") return int64;
  if (name == "bool" || name == "bool_") return bool_;
  throw nb::type_error(
      ("lazuli has no dtype " + name + "; use float32, float64, int32, int64 or bool").c_str());
}

Device device_from(nb::handle value) {
  if (value.is_none()) return default_device();
  if (nb::isinstance<Device>(value)) return nb::cast<Device>(value);
  return Device::parse(nb::cast<std::string>(nb::str(value)));
}

namespace {

PyTypeObject* tensor_type() {
  static PyTypeObject* const type = reinterpret_cast<PyTypeObject*>(nb::type<Tensor>().ptr());
  return type;
}

}  // namespace

const Tensor* tensor_in(nb::handle value) {
  if (!PyObject_TypeCheck(value.ptr(), tensor_type())) return nullptr;
  if (!nb::inst_ready(value)) {
    throw nb::type_error(
        "this lazuli.Tensor was made by lazuli.Tensor.__new__ and holds no value; make tensors "
        "with lazuli.asarray, lazuli.zeros or an op");
  }
  return nb::inst_ptr<Tensor>(value);
}

nb::object tensor_object(Tensor&& tensor) {
  nb::object object = nb::inst_alloc(tensor_type());  // raises MemoryError itself
  new (nb::inst_ptr<Tensor>(object)) Tensor(std::move(tensor));
  nb::inst_mark_ready(object);
  return object;
}

bool scalar_from(nb::handle value, ScalarOperand& out) {
  PyObject* object = value.ptr();
  if (PyBool_Check(object)) {
    out = ScalarOperand(object == Py_True);
    return true;
  }
  if (PyLong_Check(object)) {
    int overflow = 0;
    const long long integer = PyLong_AsLongLongAndOverflow(object, &overflow);
    if (overflow != 0) {
      throw nb::value_error(("Python integer " + nb::cast<std::string>(nb::repr(value)) +
                             " does not fit int64, lazuli's widest integer")
                                .c_str());
    }
    out = ScalarOperand(static_cast<int64_t>(integer));
    return true;
  }
  if (PyFloat_Check(object)) {
    out = ScalarOperand(PyFloat_AS_DOUBLE(object));
    return true;
  }
  return false;
}

bool is_array_like(nb::handle value) {
  return PyList_Check(value.ptr()) || PyTuple_Check(value.ptr()) ||
         nb::hasattr(value, "__array_interface__") || nb::hasattr(value, "__array__");
}

Tensor tensor_from_array_like(nb::handle value) {
  return nb::cast<Tensor>(nb::module_::import_("lazuli").attr("asarray")(value));
}

nb::object to_numpy(const Tensor& tensor, std::source_location loc) {
  return visit_element(tensor.dtype(loc), [&]<class T>(std::type_identity<T>) {
    std::span<const T> values;
    {
      GilReleased unlocked;
      values = tensor.data<T>(loc);
    }
    return numpy_array_of<T>(tensor, values);
  });
}

Tensor borrow_buffer(nb::handle buffer, Device device, std::source_location loc) {
  auto view = std::make_unique<Py_buffer>();
  if (PyObject_GetBuffer(buffer.ptr(), view.get(), PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) != 0) {
    PyErr_Clear();
    throw nb::type_error("not a C-contiguous buffer");
  }
  const std::optional<DType> dtype = dtype_of_format(view->format, view->itemsize);
  const bool aligned = reinterpret_cast<uintptr_t>(view->buf) % view->itemsize == 0;
  if (!dtype || !aligned) {
    PyBuffer_Release(view.get());
    throw nb::type_error("not a buffer of a lazuli dtype, aligned");
  }
  Shape shape;
  for (int d = 0; d < view->ndim; ++d) shape.push_back(view->shape[d]);
  // The view holds the object (and keeps a numpy array from being resized) until lazuli lets go,
  // on whichever thread that happens.
  const void* data = view->buf;
  std::shared_ptr<Py_buffer> held(view.release(), [](Py_buffer* released) {
    with_gil([released] {
      PyBuffer_Release(released);
      delete released;
    });
  });
  std::function<void()> release = [held]() mutable { held.reset(); };
  return visit_element(*dtype, [&]<class T>(std::type_identity<T>) {
    return borrow_data<T>(static_cast<const T*>(data), std::move(shape), std::move(release), device,
                          loc);
  });
}

nb::object cuda_dlpack_array(const Tensor& tensor, uint64_t reader_stream, bool copy,
                             std::source_location loc) {
  cuda::DeviceElements elements;
  {
    GilReleased unlocked;
    elements = copy ? cuda::device_elements_copy(tensor, reader_stream, loc)
                    : cuda::device_elements(tensor, reader_stream, loc);
  }
  std::vector<size_t> shape;
  for (int64_t extent : tensor.shape()) shape.push_back(static_cast<size_t>(extent));
  auto* owner = new std::shared_ptr<const void>(std::move(elements.owner));
  nb::capsule held(owner, [](void* memory) noexcept {
    delete static_cast<std::shared_ptr<const void>*>(memory);
  });
  return visit_element(tensor.dtype(loc), [&]<class T>(std::type_identity<T>) -> nb::object {
    return nb::ndarray<nb::array_api, const T, nb::c_contig>(
               reinterpret_cast<const T*>(elements.address), shape.size(), shape.data(), held,
               nullptr, nb::dtype<T>(), nb::device::cuda::value, elements.device)
        .cast();
  });
}

Tensor borrow_cuda_array(nb::handle array, std::source_location loc) {
  using CudaArray = nb::ndarray<nb::ro, nb::device::cuda, nb::c_contig>;
  CudaArray cuda_array;
  if (!nb::try_cast(array, cuda_array)) {
    throw nb::type_error(
        "from_dlpack takes a C-contiguous array on a CUDA device; this one's __dlpack__ gave "
        "none (a strided array its library cannot make contiguous, or its export failed)");
  }
  const nb::dlpack::dtype type = cuda_array.dtype();
  DType dtype;
  if (type == nb::dtype<float>()) {
    dtype = float32;
  } else if (type == nb::dtype<double>()) {
    dtype = float64;
  } else if (type == nb::dtype<int32_t>()) {
    dtype = int32;
  } else if (type == nb::dtype<int64_t>()) {
    dtype = int64;
  } else if (type == nb::dtype<bool>()) {
    dtype = bool_;
  } else {
    throw nb::type_error("not an array of a lazuli dtype (float32, float64, int32, int64, bool)");
  }
  Shape shape;
  for (size_t d = 0; d < cuda_array.ndim(); ++d) shape.push_back(cuda_array.shape(d));
  {
    GilReleased unlocked;
    cuda::synchronize(cuda_array.device_id(), loc);  // the producer's writes, on any stream
  }
  // The imported array holds the producer's memory (DLPack's managed tensor); it is let go on
  // whichever thread lazuli lets go of the tensor, with the GIL.
  std::shared_ptr<CudaArray> kept(new CudaArray(cuda_array),
                                  [](CudaArray* held) { with_gil([held] { delete held; }); });
  return cuda::borrow_device_elements(
      reinterpret_cast<uint64_t>(cuda_array.data()), dtype, std::move(shape),
      cuda_array.device_id(), [kept]() mutable { kept.reset(); }, loc);
}

}  // namespace lz::python
