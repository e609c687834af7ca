// The extension module lazuli._lazuli; the package (python/lazuli/__init__.py) re-exports it.
#include <nanobind/stl/string.h>

#include "bindings.h"
#include "caller_location.h"

NB_MODULE(_lazuli, m) {
  m.doc() = "lazuli's C++ API: ops record a graph, blocking points compute it.";
  lz::python::bind_errors(m);
  lz::python::bind_types(m);
  lz::python::bind_tensor(m);
  lz::python::bind_ops(m);
  lz::python::bind_runtime(m);
  lz::python::bind_training(m);
  lz::python::bind_dist(m);
  m.def("_set_package_directory", &lz::python::set_package_directory, nanobind::arg("directory"));
}
