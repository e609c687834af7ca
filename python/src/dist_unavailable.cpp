// lazuli.dist when lazuli was built without MPI: importing works; every function says why it
// cannot run.
#include "bindings.h"
#include "lazuli/error.h"

namespace lz::python {

namespace nb = nanobind;

void bind_dist(nb::module_& m) {
  nb::module_ d = m.def_submodule("dist", "Unavailable: lazuli was built without MPI.");
  d.def("is_initialized", [] { return false; });
  for (const char* name :
       {"init", "finalize", "abort", "rank", "world_size", "local_rank", "device", "barrier",
        "all_reduce", "all_gather", "reduce_scatter", "broadcast", "broadcast_parameters",
        "average_gradients", "value_and_grad", "moments"}) {
    d.def(name, [name](nb::args, nb::kwargs) {
      throw Error("[" + std::string(name) +
                  "] this lazuli was built without MPI (lazuli::dist): install libopenmpi-dev "
                  "(tools/setup-debian.sh) and build again");
    });
  }
}

}  // namespace lz::python
