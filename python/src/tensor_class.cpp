// lazuli.Tensor: properties, blocking reads, methods and indexing (its operators: operators.cpp).
#include <nanobind/stl/function.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <atomic>
#include <limits>
#include <sstream>

#include "bindings.h"
#include "caller_location.h"
#include "conversions.h"
#include "gil_released.h"
#include "operators.h"

namespace lz::python {
namespace {

bool interpreter_finalizing() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing() != 0;
#else
  return _Py_IsFinalizing() != 0;
#endif
}

/// The value of a one-element tensor as a Python number; blocks with the GIL released.
nb::object item_of(const Tensor& tensor, std::source_location loc) {
  return visit_element(tensor.dtype(loc), [&]<class T>(std::type_identity<T>) -> nb::object {
    T value;
    {
      GilReleased unlocked;
      value = tensor.item<T>(loc);
    }
    if constexpr (std::is_same_v<T, bool>) {
      return nb::bool_(value);
    } else if constexpr (std::is_floating_point_v<T>) {
      return nb::float_(value);
    } else {
      return nb::int_(value);
    }
  });
}

/// A Python int or an integer scalar (numpy's np.int64, a 0-d integer array): one position that
/// drops its axis. Tensors and arrays of any rank (which also have __index__) are taken instead.
bool is_integer_scalar(nb::handle item) {
  // A bool is a mask (numpy's x[True] adds an axis), taken below as a bool index and refused.
  if (PyBool_Check(item.ptr())) return false;
  if (PyLong_Check(item.ptr())) return true;
  if (!PyIndex_Check(item.ptr()) || nb::isinstance<Tensor>(item)) return false;
  if (!nb::hasattr(item, "ndim")) return true;
  return nb::cast<int64_t>(item.attr("ndim")) == 0;
}

/// x[key] for basic indexing: ints, slices, None, Ellipsis, or a tuple of them; an integer
/// tensor, array or list on one axis takes along it (lz.take).
Tensor index(const Tensor& x, nb::handle key, std::source_location loc) {
  std::vector<nb::handle> items;
  if (PyTuple_Check(key.ptr())) {
    for (nb::handle item : key) items.push_back(item);
  } else {
    items.push_back(key);
  }
  const Shape shape = x.shape(loc);
  const int rank = static_cast<int>(shape.size());
  int used = 0;  // axes of x the key names
  for (nb::handle item : items) {
    if (!item.is_none() && item.ptr() != Py_Ellipsis) ++used;
  }
  if (used > rank) {
    throw nb::index_error(("too many indices for a tensor of shape " + shape_string(shape) + ": " +
                           std::to_string(used) + " given")
                              .c_str());
  }
  std::vector<int64_t> start(rank, 0), stop(shape.begin(), shape.end()), step(rank, 1);
  Shape result;          // the shape after the key, None axes included
  int axis = 0;          // the next axis of x
  int gather_axis = -1;  // where in `result` a taken axis goes
  Tensor taken_indices;
  bool seen_ellipsis = false;
  for (nb::handle item : items) {
    if (item.is_none()) {
      result.push_back(1);
    } else if (item.ptr() == Py_Ellipsis) {
      if (seen_ellipsis) throw nb::index_error("an index can only have one ellipsis (...)");
      seen_ellipsis = true;
      for (int skipped = rank - used; skipped > 0; --skipped, ++axis) {
        result.push_back(shape[axis]);
      }
    } else if (PySlice_Check(item.ptr())) {
      Py_ssize_t first, last, stride;
      if (PySlice_Unpack(item.ptr(), &first, &last, &stride) != 0) throw nb::python_error();
      const Py_ssize_t count =
          PySlice_AdjustIndices(static_cast<Py_ssize_t>(shape[axis]), &first, &last, stride);
      start[axis] = first;
      stop[axis] = stride > 0 ? last : (last < 0 ? std::numeric_limits<int64_t>::min() : last);
      step[axis] = stride;
      result.push_back(count);
      ++axis;
    } else if (is_integer_scalar(item)) {
      // __index__, not int(): a 0-d float array is no position (numpy's IndexError).
      nb::object as_index = nb::steal(PyNumber_Index(item.ptr()));
      if (!as_index.is_valid()) {
        PyErr_Clear();
        throw nb::index_error(("only integers, slices, None, ... and integer arrays are valid "
                               "indices, not " +
                               nb::cast<std::string>(nb::repr(item)))
                                  .c_str());
      }
      int64_t position = nb::cast<int64_t>(as_index);
      if (position < -shape[axis] || position >= shape[axis]) {
        throw nb::index_error(("index " + std::to_string(position) + " is out of range for axis " +
                               std::to_string(axis) + " of extent " + std::to_string(shape[axis]) +
                               " (shape " + shape_string(shape) + ")")
                                  .c_str());
      }
      if (position < 0) position += shape[axis];
      start[axis] = position;
      stop[axis] = position + 1;
      ++axis;
    } else {
      if (gather_axis >= 0) {
        throw nb::index_error(
            "lazuli takes one tensor or array index per indexing; apply lz.take once per axis");
      }
      taken_indices = as_tensor(item);
      if (taken_indices.dtype(loc) == bool_) {
        throw nb::index_error(
            "boolean masks are not supported: the result's shape would depend on the values; use "
            "lz.where(mask, x, 0) instead");
      }
      if (!is_integer(taken_indices.dtype(loc))) {
        throw nb::index_error(("only integers, slices, None, ... and integer arrays are valid "
                               "indices, not an array of " +
                               std::string(dtype_name(taken_indices.dtype(loc))))
                                  .c_str());
      }
      gather_axis = static_cast<int>(result.size());
      result.push_back(shape[axis]);  // replaced by the take below
      ++axis;
    }
  }
  for (; axis < rank; ++axis) result.push_back(shape[axis]);
  Tensor sliced = lz::slice(x, start, stop, step, loc);
  // Integer indices drop their axis and None axes appear: the same elements in `result`'s shape,
  // where a taken axis is still whole until the take replaces it by the indices' axes.
  Tensor reshaped = lz::reshape(sliced, result, loc);
  if (gather_axis < 0) return reshaped;
  return lz::take(reshaped, taken_indices, gather_axis, loc);
}

/// Tensor.then callbacks not run yet: the package waits for them at exit (__init__.py).
std::atomic<int64_t> callbacks_waiting{0};

}  // namespace

void bind_tensor(nb::module_& m) {
  m.def("_callbacks_waiting", [] { return callbacks_waiting.load(); });
  nb::class_<Tensor> tensor(m, "Tensor",
                            "A lazily computed n-dimensional array: ops record, blocking points "
                            "(item, tolist, asnumpy, print) compute.",
                            nb::type_slots(tensor_operator_slots()));
  tensor
      .def_prop_ro("shape", [](const Tensor& t) { return shape_tuple(t.shape(caller_location())); })
      .def_prop_ro("dtype", [](const Tensor& t) { return t.dtype(caller_location()); })
      .def_prop_ro("device", [](const Tensor& t) { return t.device(caller_location()); })
      .def_prop_ro("ndim", [](const Tensor& t) { return t.ndim(caller_location()); })
      .def_prop_ro("size", [](const Tensor& t) { return t.size(caller_location()); })
      .def_prop_ro("T", [](const Tensor& t) { return lz::transpose(t, {}, caller_location()); })
      .def("__len__",
           [](const Tensor& t) {
             const std::source_location loc = caller_location();
             if (t.ndim(loc) == 0) throw nb::type_error("len() of a 0-d tensor");
             return t.shape(loc)[0];
           })
      .def("item", [](const Tensor& t) { return item_of(t, caller_location()); })
      .def("__float__", [](const Tensor& t) { return nb::float_(item_of(t, caller_location())); })
      .def("__int__", [](const Tensor& t) { return nb::int_(item_of(t, caller_location())); })
      .def("__index__",
           [](const Tensor& t) {
             const std::source_location loc = caller_location();
             // TypeError, as Python expects of __index__: `"a" * x` and `[...][x]` of a tensor
             // that is no integer scalar then raise it.
             if (!is_integer(t.dtype(loc)) || t.size(loc) != 1) {
               throw nb::type_error("only integer tensors of one element can be used as an index");
             }
             return nb::int_(item_of(t, loc));
           })
      .def("__bool__",
           [](const Tensor& t) {
             const std::source_location loc = caller_location();
             if (t.size(loc) != 1) {
               throw nb::value_error(("the truth value of a tensor of shape " +
                                      shape_string(t.shape(loc)) +
                                      " is ambiguous; reduce it first: (t != 0).max() is "
                                      "whether any element is nonzero, (t != 0).min() whether "
                                      "all are")
                                         .c_str());
             }
             return nb::cast<bool>(nb::bool_(item_of(t, loc)));
           })
      .def(
          "asnumpy", [](const Tensor& t) { return to_numpy(t, caller_location()); },
          "The values as a read-only numpy array over lazuli's buffer, without a copy "
          "(a blocking point).")
      .def("numpy", [](const Tensor& t) { return to_numpy(t, caller_location()); })
      .def(
          "__array__",
          [](const Tensor& t, nb::handle dtype, nb::handle copy) {
            // numpy's protocol: copy=True always copies, copy=False never does (ValueError when
            // the dtype asks for a conversion), None copies only to convert.
            const nb::object values = to_numpy(t, caller_location());
            nb::object array = values;
            if (!dtype.is_none()) array = array.attr("astype")(dtype, nb::arg("copy") = false);
            const bool must_copy = !copy.is_none() && nb::cast<bool>(copy);
            const bool no_copy = !copy.is_none() && !nb::cast<bool>(copy);
            if (no_copy && !array.is(values)) {
              throw nb::value_error(
                  "Unable to avoid a copy: the tensor's values are converted to another dtype");
            }
            if (must_copy && array.is(values)) array = array.attr("copy")();
            return array;
          },
          nb::arg("dtype") = nb::none(), nb::arg("copy") = nb::none())
      .def("tolist",
           [](const Tensor& t) { return to_numpy(t, caller_location()).attr("tolist")(); })
      .def("__repr__",
           [](const Tensor& t) {
             const std::source_location loc = caller_location();
             std::ostringstream text;
             {
               GilReleased unlocked;
               t.wait_to_read(loc);
             }
             text << t;
             return text.str();
           })
      .def("wait_to_read",
           [](const Tensor& t) {
             const std::source_location loc = caller_location();
             GilReleased unlocked;
             t.wait_to_read(loc);
           })
      .def("eval_async", [](const Tensor& t) { t.eval_async(caller_location()); })
      .def("is_ready", [](const Tensor& t) { return t.is_ready(caller_location()); })
      .def(
          "then",
          [](const Tensor& t, nb::callable callback) {
            // Called on lazuli's callback thread (or at once, here): it takes the GIL, and the
            // reference to the callable is dropped through the GIL's route.
            auto held = std::make_shared<SharedReference>(callback);
            callbacks_waiting.fetch_add(1);
            t.then(
                [held] {
                  struct Done {
                    ~Done() { callbacks_waiting.fetch_sub(1); }
                  } done;
                  // Once finalization has begun, a thread taking the GIL is ended mid-call.
                  if (!Py_IsInitialized() || interpreter_finalizing()) return;
                  nb::gil_scoped_acquire locked;
                  try {
                    held->get()();
                  } catch (nb::python_error& error) {
                    error.discard_as_unraisable("lazuli.Tensor.then callback");
                  }
                },
                caller_location());
          },
          nb::arg("callback"))
      .def("astype",
           [](const Tensor& t, nb::handle dtype) {
             return lz::astype(t, dtype_from(dtype), caller_location());
           })
      .def("to", [](const Tensor& t,
                    nb::handle device) { return t.to(device_from(device), caller_location()); })
      .def("reshape",
           [](const Tensor& t, nb::args shape) {
             const nb::handle first = shape.size() == 1 ? shape[0] : nb::handle(shape);
             return lz::reshape(t, shape_from(first), caller_location());
           })
      .def("transpose",
           [](const Tensor& t, nb::args axes) {
             std::vector<int> perm;
             const nb::handle given =
                 axes.size() == 1 && !PyLong_Check(axes[0].ptr()) ? axes[0] : nb::handle(axes);
             if (!given.is_none()) {
               for (nb::handle axis : given) perm.push_back(nb::cast<int>(axis));
             }
             return lz::transpose(t, std::move(perm), caller_location());
           })
      .def(
          "__getitem__",
          [](const Tensor& t, nb::handle key) { return index(t, key, caller_location()); },
          nb::arg("key").none())
      .def("__setitem__", [](const Tensor&, nb::handle, nb::handle) {
        throw nb::type_error(
            "lazuli tensors are immutable: compute a new one (lz.where(mask, value, x), "
            "lz.concatenate) instead of assigning into x");
      });

  // Reductions as methods, numpy's spelling (axis=None, keepdims=False), with the keywords numpy's
  // functions pass on to a method of that name (np.sum(t) calls t.sum(axis=None, dtype=None,
  // out=None)): dtype is the dtype the elements are reduced in, out cannot be written.
  const auto reduction = [&](const char* name, auto op) {
    tensor.def(
        name,
        [op, name](const Tensor& t, nb::handle axis, bool keepdims, nb::handle dtype,
                   nb::handle out) {
          if (!out.is_none()) {
            throw nb::type_error((std::string("[") + name +
                                  "] out= cannot be written: lazuli tensors are immutable; use "
                                  "the result it returns")
                                     .c_str());
          }
          const std::source_location loc = caller_location();
          const Tensor operand = dtype.is_none() ? t : lz::astype(t, dtype_from(dtype), loc);
          return op(operand, axes_from(axis), keepdims, loc);
        },
        nb::arg("axis") = nb::none(), nb::arg("keepdims") = false, nb::arg("dtype") = nb::none(),
        nb::arg("out") = nb::none());
  };
  reduction("sum", [](const Tensor& t, Axes a, bool k, std::source_location l) {
    return lz::sum(t, std::move(a), k, l);
  });
  reduction("mean", [](const Tensor& t, Axes a, bool k, std::source_location l) {
    return lz::mean(t, std::move(a), k, l);
  });
  reduction("max", [](const Tensor& t, Axes a, bool k, std::source_location l) {
    return lz::max(t, std::move(a), k, l);
  });
  reduction("min", [](const Tensor& t, Axes a, bool k, std::source_location l) {
    return lz::min(t, std::move(a), k, l);
  });

  // Comparisons give tensors, so tensors cannot be dict keys (as numpy arrays).
  tensor.attr("__hash__") = nb::none();
}

}  // namespace lz::python
