#include "errors.h"

#include <cctype>
#include <new>
#include <stdexcept>
#include <string>

#include "bindings.h"
#include "gil_released.h"
#include "lazuli/error.h"

namespace lz::python {
namespace nb = nanobind;
namespace {

// The types live as long as the process (plain pointers: no release after finalization).
PyObject* error_type = nullptr;
PyObject* dtype_error_type = nullptr;

/// `message` with lazuli's C++ names spelled as in Python: lz::Device::cpu() is
/// lz.Device.cpu(), lz::dist::finalize is lz.dist.finalize.
std::string python_spelling(std::string message) {
  const auto in_name = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == ':';
  };
  for (size_t at = message.find("lz::"); at != std::string::npos; at = message.find("lz::", at)) {
    size_t end = at;
    while (end < message.size() && in_name(message[end])) ++end;
    std::string name = message.substr(at, end - at);
    for (size_t colons = name.find("::"); colons != std::string::npos;
         colons = name.find("::", colons)) {
      name.replace(colons, 2, ".");
    }
    message.replace(at, end - at, name);
    at += name.size();
  }
  return message;
}

void set_error(const Error& error) {
  PyErr_SetString(error.kind() == Error::Kind::Type ? dtype_error_type : error_type,
                  python_spelling(error.what()).c_str());
}

PyObject* builtin_type(const nb::builtin_exception& error) {
  switch (error.type()) {
    case nb::exception_type::stop_iteration: return PyExc_StopIteration;
    case nb::exception_type::index_error: return PyExc_IndexError;
    case nb::exception_type::key_error: return PyExc_KeyError;
    case nb::exception_type::value_error: return PyExc_ValueError;
    case nb::exception_type::type_error: return PyExc_TypeError;
    case nb::exception_type::buffer_error: return PyExc_BufferError;
    case nb::exception_type::import_error: return PyExc_ImportError;
    case nb::exception_type::attribute_error: return PyExc_AttributeError;
    default: return PyExc_RuntimeError;
  }
}

template <class... Types>
bool is_one_of(const std::exception& error) {
  return (... || (dynamic_cast<const Types*>(&error) != nullptr));
}

/// The Python type nanobind raises for a standard exception.
PyObject* standard_type(const std::exception& error) {
  if (is_one_of<std::out_of_range>(error)) return PyExc_IndexError;
  if (is_one_of<std::overflow_error>(error)) return PyExc_OverflowError;
  if (is_one_of<std::domain_error, std::invalid_argument, std::length_error, std::range_error>(
          error)) {
    return PyExc_ValueError;
  }
  return PyExc_RuntimeError;
}

}  // namespace

// lz::Error as lazuli.Error, a ValueError; one about an operand's dtype as lazuli.DTypeError, also
// a TypeError (as numpy and PyTorch raise for dtypes an op does not take).
void bind_errors(nb::module_& m) {
  error_type = PyErr_NewException("lazuli.Error", PyExc_ValueError, nullptr);
  dtype_error_type = PyErr_NewException(
      "lazuli.DTypeError",
      nb::make_tuple(nb::handle(error_type), nb::handle(PyExc_TypeError)).ptr(), nullptr);
  m.attr("Error") = nb::handle(error_type);
  m.attr("DTypeError") = nb::handle(dtype_error_type);
  nb::register_exception_translator([](const std::exception_ptr& exception, void*) {
    try {
      std::rethrow_exception(exception);
    } catch (const Error& error) {
      set_error(error);
    } catch (const PythonErrorSet&) {
      // A signal handler's exception, raised during a wait: already the current Python error.
    }
  });
}

PyObject* raise_current_exception() noexcept {
  try {
    throw;
  } catch (nb::python_error& error) {
    error.restore();
  } catch (const nb::builtin_exception& error) {
    PyErr_SetString(builtin_type(error), error.what());
  } catch (const Error& error) {
    set_error(error);
  } catch (const PythonErrorSet&) {
    // Already the current Python error.
  } catch (const std::bad_alloc&) {
    PyErr_NoMemory();
  } catch (const std::exception& error) {
    PyErr_SetString(standard_type(error), error.what());
  } catch (...) {
    PyErr_SetString(PyExc_SystemError, "lazuli: an unknown C++ exception");
  }
  return nullptr;
}

}  // namespace lz::python
