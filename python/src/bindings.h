// The parts of the _lazuli extension module, one per file, each adding its names to the module.
#pragma once

#include <nanobind/nanobind.h>

namespace lz::python {

void bind_errors(nanobind::module_& m);    // lazuli.Error and DTypeError (errors.cpp)
void bind_types(nanobind::module_& m);     // dtypes, devices (types.cpp)
void bind_tensor(nanobind::module_& m);    // the Tensor class (tensor_class.cpp)
void bind_ops(nanobind::module_& m);       // creation and every op (ops.cpp)
void bind_runtime(nanobind::module_& m);   // blocking points, settings, inspection (runtime.cpp)
void bind_training(nanobind::module_& m);  // gradients, nn, optimizers, .npy (training.cpp)
void bind_dist(nanobind::module_& m);      // lazuli.dist (dist.cpp, or dist_unavailable.cpp)

}  // namespace lz::python
