// lazuli.dist when lazuli was built without MPI: importing works, joining a group says why not.
#include "bindings.h"
#include "lazuli/error.h"

namespace lz::python {

namespace nb = nanobind;

void bind_dist(nb::module_& m) {
  nb::module_ d = m.def_submodule("dist", "Unavailable: lazuli was built without MPI.");
  d.def(
      "init",
      [](double) {
        throw Error(
            "[init] this lazuli was built without MPI (lazuli::dist): install "
            "libopenmpi-dev (tools/setup-debian.sh) and build again");
      },
      nb::arg("timeout_seconds") = 0.0);
  d.def("is_initialized", [] { return false; });
}

}  // namespace lz::python
