// Creation and every op as module functions, named as in C++ and shaped like numpy's (`axis`,
// `keepdims`, shapes as tuples). Arguments that take a tensor take anything lazuli.asarray does.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string_view>

#include "bindings.h"
#include "caller_location.h"
#include "conversions.h"

namespace lz::python {
namespace {

/// A binary function's second operand, `b`, may be a Python number; `a` is a tensor.
template <class Op>
nb::object binary_function(nb::handle a, nb::handle b, Op op) {
  const std::source_location loc = caller_location();
  if (!nb::isinstance<Tensor>(a) && !is_array_like(a)) {
    // A number first: maximum(0, x).
    ScalarOperand number(0);
    if (scalar_from(a, number)) return nb::cast(op(number, as_tensor(b), loc));
  }
  const Tensor left = as_tensor(a);
  nb::object result =
      with_operand(b, [&](const Operand& operand) { return op(left, operand, loc); });
  if (result.is(nb::handle(Py_NotImplemented))) {
    throw nb::type_error(("unsupported operand " + nb::cast<std::string>(nb::repr(b))).c_str());
  }
  return result;
}

/// The dtype for Python's number `value` when none is given, as numpy: bool, int64 or float32
/// (lazuli's default floating dtype); a numpy scalar's own dtype (np.int32(3) fills int32).
DType dtype_for(nb::handle dtype, nb::handle value) {
  if (!dtype.is_none()) return dtype_from(dtype);
  if (PyBool_Check(value.ptr())) return bool_;
  if (PyLong_CheckExact(value.ptr())) return int64;
  if (PyFloat_CheckExact(value.ptr())) return float32;
  if (nb::hasattr(value, "dtype")) {
    try {
      return dtype_from(value.attr("dtype"));
    } catch (const nb::builtin_exception&) {
      // A numpy dtype lazuli lacks (float16, uint8): by its kind below.
    }
  }
  return is_single_integer(value) ? int64 : float32;
}

}  // namespace

void bind_ops(nb::module_& m) {
  // ---- Creation ----
  m.def(
      "_borrow",
      [](nb::handle buffer, nb::handle device) {
        return borrow_buffer(buffer, device_from(device), caller_location());
      },
      nb::arg("buffer"), nb::arg("device") = nb::none());
  m.def(
      "_borrow_cuda", [](nb::handle array) { return borrow_cuda_array(array, caller_location()); },
      nb::arg("array"));
  m.def(
      "_cuda_dlpack_array",
      [](const Tensor& tensor, uint64_t reader_stream, bool copy) {
        return cuda_dlpack_array(tensor, reader_stream, copy, caller_location());
      },
      nb::arg("tensor"), nb::arg("reader_stream"), nb::arg("copy"));
  m.def(
      "full",
      [](nb::handle shape, nb::handle value, nb::handle dtype, nb::handle device) {
        const DeviceScope on(device_from(device));
        return lz::full(shape_from(shape), nb::cast<double>(value), dtype_for(dtype, value),
                        caller_location());
      },
      nb::arg("shape"), nb::arg("fill_value"), nb::arg("dtype") = nb::none(),
      nb::arg("device") = nb::none());
  m.def(
      "zeros",
      [](nb::handle shape, nb::handle dtype, nb::handle device) {
        const DeviceScope on(device_from(device));
        return lz::zeros(shape_from(shape), dtype.is_none() ? float32 : dtype_from(dtype),
                         caller_location());
      },
      nb::arg("shape"), nb::arg("dtype") = nb::none(), nb::arg("device") = nb::none());
  m.def(
      "ones",
      [](nb::handle shape, nb::handle dtype, nb::handle device) {
        const DeviceScope on(device_from(device));
        return lz::ones(shape_from(shape), dtype.is_none() ? float32 : dtype_from(dtype),
                        caller_location());
      },
      nb::arg("shape"), nb::arg("dtype") = nb::none(), nb::arg("device") = nb::none());
  m.def(
      "arange",
      [](nb::handle start, nb::handle stop, nb::handle step, nb::handle dtype, nb::handle device) {
        const DeviceScope on(device_from(device));
        // arange(n) counts 0..n-1; integers only give int64, as numpy.
        const bool integers = is_single_integer(start) &&
                              (stop.is_none() || is_single_integer(stop)) &&
                              is_single_integer(step);
        const DType type = dtype.is_none() ? (integers ? int64 : float32) : dtype_from(dtype);
        const double first = stop.is_none() ? 0.0 : nb::cast<double>(start);
        const double last = stop.is_none() ? nb::cast<double>(start) : nb::cast<double>(stop);
        return lz::arange(first, last, nb::cast<double>(step), type, caller_location());
      },
      nb::arg("start"), nb::arg("stop") = nb::none(), nb::arg("step") = 1,
      nb::arg("dtype") = nb::none(), nb::arg("device") = nb::none());
  m.def(
      "random_uniform",
      [](nb::handle shape, uint64_t seed, double low, double high, nb::handle dtype,
         nb::handle device) {
        const DeviceScope on(device_from(device));
        return lz::random_uniform(shape_from(shape), seed, low, high,
                                  dtype.is_none() ? float32 : dtype_from(dtype), caller_location());
      },
      nb::arg("shape"), nb::arg("seed"), nb::arg("low") = 0.0, nb::arg("high") = 1.0,
      nb::arg("dtype") = nb::none(), nb::arg("device") = nb::none());
  m.def(
      "random_normal",
      [](nb::handle shape, uint64_t seed, double mean, double std, nb::handle dtype,
         nb::handle device) {
        const DeviceScope on(device_from(device));
        return lz::random_normal(shape_from(shape), seed, mean, std,
                                 dtype.is_none() ? float32 : dtype_from(dtype), caller_location());
      },
      nb::arg("shape"), nb::arg("seed"), nb::arg("mean") = 0.0, nb::arg("std") = 1.0,
      nb::arg("dtype") = nb::none(), nb::arg("device") = nb::none());

  // ---- Elementwise ----
#define LZ_UNARY(name)                                                               \
  m.def(                                                                             \
      #name, [](nb::handle x) { return lz::name(as_tensor(x), caller_location()); }, \
      nb::arg("x"));
  // lazuli.exp, lazuli.log, ...: one per LZ_UNARY_FUNCTION_OP row of the op table.
#define LZ_UNARY_FUNCTION_OP(Enum, name, ...) LZ_UNARY(name)
#include "lazuli/op_table.def"
  LZ_UNARY(stop_gradient)
#undef LZ_UNARY
  // What the tests check the package against: the op table's unary functions, and numpy's
  // name of each elementwise op, under which the package binds it.
  nb::list unary_functions;
#define LZ_UNARY_FUNCTION_OP(Enum, name, ...) unary_functions.append(#name);
#include "lazuli/op_table.def"
  m.attr("_unary_functions") = nb::tuple(unary_functions);
  nb::dict numpy_names;
#define LZ_OP(Enum, name, kind, arity, dtypes, cost, gradient, numpy, fuzz)          \
  if ((std::string_view(#kind) == "Unary" || std::string_view(#kind) == "Binary") && \
      !std::string_view(numpy).empty()) {                                            \
    numpy_names[#name] = numpy;                                                      \
  }
#include "lazuli/op_table.def"
  m.attr("_numpy_names") = numpy_names;
  m.def("negative", [](nb::handle x) { return -Traced(as_tensor(x), caller_location()); });

  const auto binary = [&](const char* name, auto op) {
    m.def(
        name, [op](nb::handle a, nb::handle b) { return binary_function(a, b, op); }, nb::arg("a"),
        nb::arg("b"));
  };
  // Each form: (tensor, operand, loc) and (number, tensor, loc).
#define LZ_OPERATOR(name, symbol)                                                       \
  binary(name, []<class A, class B>(const A& a, const B& b, std::source_location loc) { \
    if constexpr (std::is_same_v<A, Tensor>) {                                          \
      return Traced(a, loc) symbol b;                                                   \
    } else {                                                                            \
      return a symbol Traced(b, loc);                                                   \
    }                                                                                   \
  });
  LZ_OPERATOR("add", +)
  LZ_OPERATOR("subtract", -)
  LZ_OPERATOR("multiply", *)
  LZ_OPERATOR("divide", /)
  LZ_OPERATOR("equal", ==)
  LZ_OPERATOR("not_equal", !=)
  LZ_OPERATOR("less", <)
  LZ_OPERATOR("less_equal", <=)
  LZ_OPERATOR("greater", >)
  LZ_OPERATOR("greater_equal", >=)
#undef LZ_OPERATOR
#define LZ_FUNCTION(name)                                                    \
  binary(#name, [](const auto& a, const auto& b, std::source_location loc) { \
    return lz::name(a, b, loc);                                              \
  });
  LZ_FUNCTION(pow)
  LZ_FUNCTION(maximum)
  LZ_FUNCTION(minimum)
#undef LZ_FUNCTION
  m.attr("power") = m.attr("pow");
  m.def(
      "where",
      [](nb::handle condition, nb::handle a, nb::handle b) {
        const std::source_location loc = caller_location();
        const Tensor cond = as_tensor(condition);
        const auto refuse_if_not_operand = [](nb::object result, nb::handle value) {
          if (result.is(nb::handle(Py_NotImplemented))) {
            throw nb::type_error(
                ("unsupported operand " + nb::cast<std::string>(nb::repr(value))).c_str());
          }
          return result;
        };
        return refuse_if_not_operand(
            with_operand(a,
                         [&](const Operand& if_true) {
                           nb::object result = refuse_if_not_operand(
                               with_operand(b,
                                            [&](const Operand& if_false) {
                                              return lz::where(cond, if_true, if_false, loc);
                                            }),
                               b);
                           return nb::cast<Tensor>(result);
                         }),
            a);
      },
      nb::arg("condition"), nb::arg("x"), nb::arg("y"));
  m.def(
      "astype",
      [](nb::handle x, nb::handle dtype) {
        return lz::astype(as_tensor(x), dtype_from(dtype), caller_location());
      },
      nb::arg("x"), nb::arg("dtype"));

  // ---- Reductions ----
#define LZ_REDUCTION(name)                                                           \
  m.def(                                                                             \
      #name,                                                                         \
      [](nb::handle x, nb::handle axis, bool keepdims) {                             \
        return lz::name(as_tensor(x), axes_from(axis), keepdims, caller_location()); \
      },                                                                             \
      nb::arg("x"), nb::arg("axis") = nb::none(), nb::arg("keepdims") = false);
  LZ_REDUCTION(sum)
  LZ_REDUCTION(mean)
  LZ_REDUCTION(max)
  LZ_REDUCTION(min)
  LZ_REDUCTION(logsumexp)
#undef LZ_REDUCTION
  m.def(
      "argmax",
      [](nb::handle x, int axis, bool keepdims) {
        return lz::argmax(as_tensor(x), axis, keepdims, caller_location());
      },
      nb::arg("x"), nb::arg("axis"), nb::arg("keepdims") = false);
  m.def(
      "argmin",
      [](nb::handle x, int axis, bool keepdims) {
        return lz::argmin(as_tensor(x), axis, keepdims, caller_location());
      },
      nb::arg("x"), nb::arg("axis"), nb::arg("keepdims") = false);

  // ---- Movement ----
  m.def(
      "reshape",
      [](nb::handle x, nb::handle shape) {
        return lz::reshape(as_tensor(x), shape_from(shape), caller_location());
      },
      nb::arg("x"), nb::arg("shape"));
  m.def(
      "transpose",
      [](nb::handle x, nb::handle axes) {
        std::vector<int> perm;
        if (!axes.is_none()) {
          for (nb::handle axis : axes) perm.push_back(nb::cast<int>(axis));
        }
        return lz::transpose(as_tensor(x), std::move(perm), caller_location());
      },
      nb::arg("x"), nb::arg("axes") = nb::none());
  m.def(
      "broadcast_to",
      [](nb::handle x, nb::handle shape) {
        return lz::broadcast_to(as_tensor(x), shape_from(shape), caller_location());
      },
      nb::arg("x"), nb::arg("shape"));
  m.def(
      "slice",
      [](nb::handle x, std::vector<int64_t> start, std::vector<int64_t> stop,
         std::vector<int64_t> step) {
        return lz::slice(as_tensor(x), std::move(start), std::move(stop), std::move(step),
                         caller_location());
      },
      nb::arg("x"), nb::arg("start"), nb::arg("stop"), nb::arg("step") = std::vector<int64_t>{});
  m.def(
      "concatenate",
      [](nb::handle tensors, int axis) {
        std::vector<Tensor> parts;
        for (nb::handle part : tensors) parts.push_back(as_tensor(part));
        return lz::concatenate(parts, axis, caller_location());
      },
      nb::arg("tensors"), nb::arg("axis") = 0);
  m.def(
      "expand_dims",
      [](nb::handle x, int axis) { return lz::expand_dims(as_tensor(x), axis, caller_location()); },
      nb::arg("x"), nb::arg("axis"));
  m.def(
      "squeeze",
      [](nb::handle x, nb::handle axis) {
        const Axes axes = axes_from(axis);
        return lz::squeeze(as_tensor(x), axes.list(), caller_location());
      },
      nb::arg("x"), nb::arg("axis") = nb::none());
  m.def(
      "take",
      [](nb::handle x, nb::handle indices, nb::handle axis) {
        const std::source_location loc = caller_location();
        if (axis.is_none()) return lz::take(as_tensor(x), as_tensor(indices), loc);
        return lz::take(as_tensor(x), as_tensor(indices), nb::cast<int>(axis), loc);
      },
      nb::arg("x"), nb::arg("indices"), nb::arg("axis") = nb::none());
  m.def(
      "take_along_axis",
      [](nb::handle x, nb::handle indices, int axis) {
        return lz::take_along_axis(as_tensor(x), as_tensor(indices), axis, caller_location());
      },
      nb::arg("x"), nb::arg("indices"), nb::arg("axis"));

  // ---- Linear algebra and nn ----
  m.def(
      "matmul",
      [](nb::handle a, nb::handle b) {
        return lz::matmul(as_tensor(a), as_tensor(b), caller_location());
      },
      nb::arg("a"), nb::arg("b"));
  m.def(
      "softmax",
      [](nb::handle x, int axis) { return lz::softmax(as_tensor(x), axis, caller_location()); },
      nb::arg("x"), nb::arg("axis") = -1);
  m.def(
      "log_softmax",
      [](nb::handle x, int axis) { return lz::log_softmax(as_tensor(x), axis, caller_location()); },
      nb::arg("x"), nb::arg("axis") = -1);
  m.def(
      "one_hot",
      [](nb::handle labels, int64_t classes, nb::handle dtype) {
        return lz::one_hot(as_tensor(labels), classes,
                           dtype.is_none() ? float32 : dtype_from(dtype), caller_location());
      },
      nb::arg("labels"), nb::arg("classes"), nb::arg("dtype") = nb::none());
  m.def(
      "cross_entropy",
      [](nb::handle logits, nb::handle labels) {
        return lz::cross_entropy(as_tensor(logits), as_tensor(labels), caller_location());
      },
      nb::arg("logits"), nb::arg("labels"));
}

}  // namespace lz::python
