// Gradients, the nn helpers, the optimizers, .npy files and the data loader.
#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <filesystem>
#include <optional>

#include "bindings.h"
#include "caller_location.h"
#include "conversions.h"
#include "gil_released.h"

namespace lz::python {
namespace {

/// The parameters or gradients of an optimizer step, grad or vjp.
std::vector<Tensor> tensors_of(nb::handle value) {
  return tensor_list(value, "the parameters and gradients");
}

/// Writes the stepped parameters back into the caller's list, as C++'s step rebinds them.
template <class Optimizer>
void step(Optimizer& optimizer, nb::list params, nb::handle grads) {
  std::vector<Tensor> values = tensors_of(params);
  optimizer.step(values, tensors_of(grads), caller_location());
  for (size_t i = 0; i < values.size(); ++i) params[i] = nb::cast(values[i]);
}

}  // namespace

void bind_training(nb::module_& m) {
  m.def(
      "grad",
      [](nb::handle f, nb::handle params) {
        return grad(scalar_function(f), tensors_of(params), caller_location());
      },
      nb::arg("f"), nb::arg("params"),
      "The gradients of f(*params), a scalar tensor, with respect to each of params.");
  m.def(
      "value_and_grad",
      [](nb::handle f, nb::handle params) {
        ValueAndGrad result =
            value_and_grad(scalar_function(f), tensors_of(params), caller_location());
        return nb::make_tuple(result.value, result.grads);
      },
      nb::arg("f"), nb::arg("params"));
  m.def(
      "vjp",
      [](nb::handle outputs, nb::handle inputs, nb::handle cotangents) {
        return vjp(tensors_of(outputs), tensors_of(inputs), tensors_of(cotangents),
                   caller_location());
      },
      nb::arg("outputs"), nb::arg("inputs"), nb::arg("cotangents"));

  m.def(
      "load_npy",
      [](const std::filesystem::path& path, nb::handle device) {  // a str or os.PathLike
        return load_npy(path.string(), device_from(device), caller_location());
      },
      nb::arg("path"), nb::arg("device") = nb::none());
  m.def(
      "save_npy",
      [](const std::filesystem::path& path, const Tensor& x) {
        const std::source_location loc = caller_location();
        GilReleased unlocked;
        save_npy(path.string(), x, loc);
      },
      nb::arg("path"), nb::arg("x"));

  nb::module_ nn_module = m.def_submodule("nn", "Initializers and the layers the examples use.");
#define LZ_INITIALIZER(name)                                                                    \
  nn_module.def(                                                                                \
      #name,                                                                                    \
      [](nb::handle shape, uint64_t seed, nb::handle dtype) {                                   \
        return nn::name(shape_from(shape), seed, dtype.is_none() ? float32 : dtype_from(dtype), \
                        caller_location());                                                     \
      },                                                                                        \
      nb::arg("shape"), nb::arg("seed"), nb::arg("dtype") = nb::none());
  LZ_INITIALIZER(glorot_uniform)
  LZ_INITIALIZER(glorot_normal)
  LZ_INITIALIZER(he_uniform)
  LZ_INITIALIZER(he_normal)
#undef LZ_INITIALIZER
  nn_module.def(
      "linear",
      [](nb::handle x, nb::handle weight, nb::handle bias) {
        return nn::linear(as_tensor(x), as_tensor(weight), as_tensor(bias), caller_location());
      },
      nb::arg("x"), nb::arg("weight"), nb::arg("bias"));
  nn_module.def(
      "mlp_parameters",
      [](const std::vector<int64_t>& sizes, uint64_t seed, nb::handle dtype) {
        return nn::mlp_parameters(sizes, seed, dtype.is_none() ? float32 : dtype_from(dtype),
                                  caller_location());
      },
      nb::arg("sizes"), nb::arg("seed"), nb::arg("dtype") = nb::none());
  nn_module.def(
      "mlp",
      [](nb::handle parameters, nb::handle x) {
        return nn::mlp(tensors_of(parameters), as_tensor(x), caller_location());
      },
      nb::arg("parameters"), nb::arg("x"));

  nb::module_ data_module = m.def_submodule("data", "Minibatches prepared in the background.");
  nb::class_<data::DataLoader>(data_module, "DataLoader",
                               "Minibatches of the rows of arrays (each (N, ...)), shuffled per "
                               "epoch from a seed and prepared on a background thread, at most "
                               "`prefetch` ahead. Iterating starts the next epoch.",
                               nb::dynamic_attr())
      .def(
          "__init__",
          [](data::DataLoader* self, nb::handle arrays, int64_t batch_size, bool shuffle,
             uint64_t seed, bool drop_last, int64_t prefetch, nb::handle device, int64_t shards,
             int64_t shard) {
            std::vector<Tensor> tensors;
            for (nb::handle array : arrays) tensors.push_back(as_tensor(array));
            data::DataLoader::Options options;
            options.batch_size = batch_size;
            options.shuffle = shuffle;
            options.seed = seed;
            options.drop_last = drop_last;
            options.prefetch = prefetch;
            options.device = device_from(device);
            options.shards = shards;
            options.shard = shard;
            new (self) data::DataLoader(tensors, options, caller_location());
          },
          nb::arg("arrays"), nb::arg("batch_size") = 32, nb::arg("shuffle") = true,
          nb::arg("seed") = 0, nb::arg("drop_last") = false, nb::arg("prefetch") = 2,
          nb::arg("device") = nb::none(), nb::arg("shards") = 1, nb::arg("shard") = 0)
      .def("__len__", &data::DataLoader::batches_per_epoch)
      .def_prop_ro("size", &data::DataLoader::size)
      .def("start_epoch", &data::DataLoader::start_epoch, nb::arg("epoch"))
      .def(
          "next",
          [](data::DataLoader& loader) -> nb::object {
            std::optional<std::vector<Tensor>> batch;
            {
              GilReleased unlocked;
              batch = loader.next();
            }
            if (!batch) return nb::none();
            return nb::tuple(nb::cast(*batch));
          },
          "The next batch of the epoch (a tuple, one tensor per array), or None at its end.");

  nb::module_ optim_module = m.def_submodule("optim", "Optimizers whose steps are recorded ops.");
  nb::class_<optim::SGD>(optim_module, "SGD")
      .def(
          "__init__",
          [](optim::SGD* self, double learning_rate, double momentum, double weight_decay,
             bool nesterov) {
            new (self) optim::SGD({learning_rate, momentum, weight_decay, nesterov});
          },
          nb::arg("learning_rate") = 0.01, nb::arg("momentum") = 0.0, nb::arg("weight_decay") = 0.0,
          nb::arg("nesterov") = false)
      .def("step", &step<optim::SGD>, nb::arg("params"), nb::arg("grads"),
           "Replaces each of params (a list) by its value after one step along grads.")
      .def_prop_rw(
          "learning_rate", [](optim::SGD& o) { return o.options().learning_rate; },
          [](optim::SGD& o, double rate) { o.options().learning_rate = rate; });
  nb::class_<optim::Adam>(optim_module, "Adam")
      .def(
          "__init__",
          [](optim::Adam* self, double learning_rate, double beta1, double beta2, double epsilon,
             double weight_decay) {
            new (self) optim::Adam({learning_rate, beta1, beta2, epsilon, weight_decay});
          },
          nb::arg("learning_rate") = 1e-3, nb::arg("beta1") = 0.9, nb::arg("beta2") = 0.999,
          nb::arg("epsilon") = 1e-8, nb::arg("weight_decay") = 0.0)
      .def("step", &step<optim::Adam>, nb::arg("params"), nb::arg("grads"))
      .def_prop_ro("steps", &optim::Adam::steps)
      .def_prop_rw(
          "learning_rate", [](optim::Adam& o) { return o.options().learning_rate; },
          [](optim::Adam& o, double rate) { o.options().learning_rate = rate; });
}

}  // namespace lz::python
