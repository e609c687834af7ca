// dtypes, devices and their scopes, and the CUDA queries.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <optional>

#include "bindings.h"
#include "conversions.h"

namespace lz::python {
namespace {

/// `with lazuli.DeviceScope(device):` and `with lazuli.StreamScope(index):`, for the thread that
/// enters them.
template <class Scope, class Argument>
struct ScopeContext {
  Argument argument;
  std::optional<Scope> scope;
};

}  // namespace

void bind_types(nb::module_& m) {
  nb::enum_<DType>(m, "dtype", "Element type of a tensor.")
      .value("float32", DType::Float32)
      .value("float64", DType::Float64)
      .value("int32", DType::Int32)
      .value("int64", DType::Int64)
      .value("bool", DType::Bool);
  m.attr("float32") = DType::Float32;
  m.attr("float64") = DType::Float64;
  m.attr("int32") = DType::Int32;
  m.attr("int64") = DType::Int64;
  m.attr("bool_") = DType::Bool;

  nb::class_<Device>(m, "Device", "A logical CPU device or a CUDA device.")
      .def(
          "__init__",
          [](Device* self, const std::string& name) { new (self) Device(Device::parse(name)); },
          nb::arg("name"))
      .def_static("cpu", &Device::cpu, nb::arg("index") = 0)
      .def_static("cuda", &Device::cuda, nb::arg("index") = 0)
      .def_prop_ro("index", &Device::index)
      .def_prop_ro("kind",
                   [](const Device& d) { return d.kind() == Device::Kind::Cpu ? "cpu" : "cuda"; })
      .def("__str__", &Device::name)
      .def("__repr__", [](const Device& d) { return "lazuli.Device('" + d.name() + "')"; })
      // An operator: anything but a Device compares unequal (NotImplemented), not TypeError.
      .def(
          "__eq__", [](const Device& a, const Device& b) { return a == b; }, nb::is_operator())
      .def("__hash__", [](const Device& d) { return std::hash<std::string>()(d.name()); });
  m.def("cpu", &Device::cpu, nb::arg("index") = 0);
  m.def("default_device", &default_device);
  m.def("set_default_device", [](nb::handle device) { set_default_device(device_from(device)); });

  using DeviceContext = ScopeContext<DeviceScope, Device>;
  nb::class_<DeviceContext>(m, "DeviceScope",
                            "Within `with`, new tensors of this thread are made on the device.")
      .def("__init__",
           [](DeviceContext* self, nb::handle device) {
             new (self) DeviceContext{device_from(device), {}};
           })
      .def("__enter__",
           [](DeviceContext& context) {
             context.scope.emplace(context.argument);
             return context.argument;
           })
      .def("__exit__", [](DeviceContext& context, nb::args) { context.scope.reset(); });
  using StreamContext = ScopeContext<StreamScope, int>;
  nb::class_<StreamContext>(m, "StreamScope",
                            "Within `with`, this thread's work runs on stream `index` of its "
                            "device.")
      .def("__init__",
           [](StreamContext* self, int index) {
             new (self) StreamContext{index, {}};
           })
      .def("__enter__", [](StreamContext& context) { context.scope.emplace(context.argument); })
      .def("__exit__", [](StreamContext& context, nb::args) { context.scope.reset(); });

  nb::module_ cuda_module = m.def_submodule("cuda", "CUDA devices: whether there are any.");
  cuda_module.def("is_available", &cuda::is_available);
  cuda_module.def("device_count", &cuda::device_count);
  cuda_module.def("unavailable_reason", &cuda::unavailable_reason);
  cuda_module.def(
      "memory_stats",
      [](int index) {
        const cuda::MemoryStats stats = cuda::memory_stats(index);
        nb::dict out;
        out["bytes_in_use"] = stats.bytes_in_use;
        out["bytes_cached"] = stats.bytes_cached;
        out["peak_bytes_in_use"] = stats.peak_bytes_in_use;
        out["allocations"] = stats.allocations;
        out["reuses"] = stats.reuses;
        out["device_allocations"] = stats.device_allocations;
        out["cache_flushes"] = stats.cache_flushes;
        return out;
      },
      nb::arg("index") = 0);
  cuda_module.def("empty_cache", &cuda::empty_cache, nb::arg("index") = 0);
}

}  // namespace lz::python
