// lazuli.dist: the process group and its collectives (lazuli::dist, on MPI).
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <string>

#include "bindings.h"
#include "caller_location.h"
#include "conversions.h"
#include "gil_released.h"
#include "lazuli/dist.h"

namespace lz::python {
namespace {

dist::ReduceOp reduce_op_from(const std::string& name) {
  if (name == "sum") return dist::ReduceOp::Sum;
  if (name == "mean") return dist::ReduceOp::Mean;
  if (name == "max") return dist::ReduceOp::Max;
  if (name == "min") return dist::ReduceOp::Min;
  throw Error("[all_reduce] op \"" + name + "\" is not one of \"sum\", \"mean\", \"max\", \"min\"");
}

}  // namespace

void bind_dist(nb::module_& m) {
  nb::module_ d = m.def_submodule(
      "dist",
      "Data-parallel work across the ranks of an mpirun: the process group (on MPI) and "
      "collectives recorded like every other op. Every rank must record the same collectives, "
      "of the same shapes, in the same order.");
  d.def(
      "init",
      [](double timeout_seconds) {
        dist::init({.timeout_seconds = timeout_seconds}, caller_location());
      },
      nb::arg("timeout_seconds") = 0.0,
      "Joins the process group (the ranks of mpirun; a process started alone is a group of "
      "one). Collectives wait timeout_seconds for every rank (<= 0: LZ_DIST_TIMEOUT, else 300).");
  d.def("finalize", [] {
    GilReleased unlocked;
    dist::finalize();
  });
  d.def("is_initialized", &dist::is_initialized);
  d.def("abort", &dist::abort, nb::arg("why"), nb::arg("status") = 1,
        "Ends every rank of the group now (MPI_Abort), saying which rank ended it and why: for a "
        "rank that cannot go on, so that the others fail at once instead of waiting for their "
        "collectives' timeout. An uncaught exception on a rank of a group calls it.");
  d.def("rank", [] { return dist::rank(caller_location()); });
  d.def("world_size", [] { return dist::world_size(caller_location()); });
  d.def("local_rank", [] { return dist::local_rank(caller_location()); });
  d.def(
      "device", [] { return dist::device(caller_location()); },
      "This rank's device: its GPU (local_rank modulo the GPUs) when the machine has any, else "
      "the CPU.");
  d.def(
      "barrier",
      [] {
        const std::source_location loc = caller_location();
        GilReleased unlocked;
        dist::barrier(loc);
      },
      "Returns once every rank has called barrier (pending work is not waited for).");
  d.def(
      "all_reduce",
      [](nb::handle x, const std::string& op) {
        return dist::all_reduce(as_tensor(x), reduce_op_from(op), caller_location());
      },
      nb::arg("x"), nb::arg("op") = "sum",
      "Every rank gets the elementwise \"sum\", \"mean\", \"max\" or \"min\" of all ranks' x.");
  d.def(
      "all_gather", [](nb::handle x) { return dist::all_gather(as_tensor(x), caller_location()); },
      nb::arg("x"), "The ranks' x concatenated along axis 0, rank 0's first.");
  d.def(
      "reduce_scatter",
      [](nb::handle x, const std::string& op) {
        return dist::reduce_scatter(as_tensor(x), reduce_op_from(op), caller_location());
      },
      nb::arg("x"), nb::arg("op") = "sum",
      "The \"sum\" or \"mean\" of all ranks' x, split along axis 0: rank r gets part r.");
  d.def(
      "broadcast",
      [](nb::handle x, int root) { return dist::broadcast(as_tensor(x), root, caller_location()); },
      nb::arg("x"), nb::arg("root") = 0, "Every rank gets rank root's x.");
  d.def(
      "broadcast_parameters",
      [](nb::handle parameters, int root) {
        return dist::broadcast_parameters(tensor_list(parameters, "the parameters"), root,
                                          caller_location());
      },
      nb::arg("parameters"), nb::arg("root") = 0);
  d.def(
      "average_gradients",
      [](nb::handle gradients, int64_t bucket_bytes) {
        return dist::average_gradients(tensor_list(gradients, "the gradients"), bucket_bytes,
                                       caller_location());
      },
      nb::arg("gradients"), nb::arg("bucket_bytes") = dist::kDefaultBucketBytes,
      "The gradients averaged over the ranks, all-reduced in buckets, last ones first.");
  d.def(
      "value_and_grad",
      [](nb::handle f, nb::handle params, int64_t bucket_bytes) {
        ValueAndGrad result =
            dist::value_and_grad(scalar_function(f), tensor_list(params, "the parameters"),
                                 bucket_bytes, caller_location());
        return nb::make_tuple(result.value, result.grads);
      },
      nb::arg("f"), nb::arg("params"), nb::arg("bucket_bytes") = dist::kDefaultBucketBytes,
      "lazuli.value_and_grad with the gradients averaged over the ranks.");
  d.def(
      "moments",
      [](nb::handle x, nb::handle axes, bool keepdims) {
        const dist::Moments moments =
            dist::moments(as_tensor(x), axes_from(axes), keepdims, caller_location());
        return nb::make_tuple(moments.mean, moments.variance);
      },
      nb::arg("x"), nb::arg("axes") = nb::none(), nb::arg("keepdims") = false,
      "(mean, variance) of x over axes as if every rank's x were one batch.");
}

}  // namespace lz::python
