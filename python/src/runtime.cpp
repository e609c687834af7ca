// Blocking points for many tensors, settings, counters and inspection.
#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <filesystem>

#include "bindings.h"
#include "caller_location.h"
#include "conversions.h"
#include "gil_released.h"

namespace lz::python {
namespace {

/// A tensor or a sequence of tensors as a list of them.
std::vector<Tensor> tensors_from(nb::handle value) {
  if (nb::isinstance<Tensor>(value)) return {nb::cast<Tensor>(value)};
  std::vector<Tensor> tensors;
  for (nb::handle item : value) tensors.push_back(tensor_item(item, "the tensors"));
  return tensors;
}

LogLevel log_level_from(const std::string& name) {
  if (name == "off") return LogLevel::Off;
  if (name == "info") return LogLevel::Info;
  if (name == "debug") return LogLevel::Debug;
  throw nb::value_error(("log level '" + name + "': use 'off', 'info' or 'debug'").c_str());
}

Engine engine_from(const std::string& name) {
  if (name == "async") return Engine::Async;
  if (name == "sync") return Engine::Sync;
  throw nb::value_error(("engine '" + name + "': use 'async' or 'sync'").c_str());
}

}  // namespace

void bind_runtime(nb::module_& m) {
  m.def("_mark_interpreter_exiting", &mark_interpreter_exiting);
  m.def("waitall", [] {
    const std::source_location loc = caller_location();
    GilReleased unlocked;
    waitall(loc);
  });
  m.def(
      "eval_async",
      [](nb::handle tensors) { eval_async(tensors_from(tensors), caller_location()); },
      nb::arg("tensors"));

  m.def(
      "ir_text",
      [](nb::handle outputs) { return ir_text(tensors_from(outputs), caller_location()); },
      nb::arg("outputs"));
  m.def(
      "ir_dot", [](nb::handle outputs) { return ir_dot(tensors_from(outputs), caller_location()); },
      nb::arg("outputs"));
  m.def("stats", [] {
    const Stats s = stats();
    nb::dict out;
    out["evaluations"] = s.evaluations;
    out["nodes_evaluated"] = s.nodes_evaluated;
    out["kernels_launched"] = s.kernels_launched;
    out["kernels_cancelled"] = s.kernels_cancelled;
    out["kernels_compiled"] = s.kernels_compiled;
    out["kernels_interpreted"] = s.kernels_interpreted;
    out["cache_hits"] = s.cache_hits;
    out["cache_misses"] = s.cache_misses;
    out["bytes_allocated"] = s.bytes_allocated;
    out["disk_cache_hits"] = s.disk_cache_hits;
    out["compile_microseconds"] = s.compile_microseconds;
    out["plan_hits"] = s.plan_hits;
    out["plan_misses"] = s.plan_misses;
    out["collectives"] = s.collectives;
    out["collective_bytes"] = s.collective_bytes;
    out["collective_wait_microseconds"] = s.collective_wait_microseconds;
    out["collective_move_microseconds"] = s.collective_move_microseconds;
    out["outputs_written_in_place"] = s.outputs_written_in_place;
    out["bytes_in_use"] = s.bytes_in_use;
    out["peak_bytes_in_use"] = s.peak_bytes_in_use;
    return out;
  });
  m.def("reset_stats", &reset_stats);
  m.def("last_evaluation", [] {
    const EvaluationRecord record = last_evaluation();
    nb::dict out;
    out["number"] = record.number;
    out["reason"] = evaluation_reason_name(record.reason);
    out["location"] = record.location;
    out["nodes"] = record.nodes;
    out["kernels"] = record.kernels;
    out["left_pending"] = record.left_pending;
    out["prepare_milliseconds"] = record.prepare_milliseconds;
    out["milliseconds"] = record.milliseconds;
    return out;
  });
  // Paths: a str or an os.PathLike (pathlib.Path).
  m.def(
      "start_trace", [](const std::filesystem::path& path) { start_trace(path.string()); },
      nb::arg("path"));
  m.def("stop_trace", &stop_trace);

  m.def(
      "set_log_level", [](const std::string& level) { set_log_level(log_level_from(level)); },
      nb::arg("level"));
  m.def(
      "set_dump_directory",
      [](const std::filesystem::path& directory) { set_dump_directory(directory.string()); },
      nb::arg("directory"));
  m.def("set_dump_passes", &set_dump_passes, nb::arg("pattern"));
  m.def("set_fusion", &set_fusion, nb::arg("enabled"));
  m.def("set_jit", &set_jit, nb::arg("enabled"));
  m.def("set_jit_strict", &set_jit_strict, nb::arg("strict"));
  m.def("set_plan_cache", &set_plan_cache, nb::arg("enabled"));
  m.def("set_in_place", &set_in_place, nb::arg("enabled"));
  m.def(
      "set_cache_directory",
      [](const std::filesystem::path& directory) { set_cache_directory(directory.string()); },
      nb::arg("directory"));
  m.def("set_kernel_cache_size", &set_kernel_cache_size, nb::arg("kernels"));
  m.def("set_disabled_passes", &set_disabled_passes, nb::arg("names"));
  m.def(
      "set_engine", [](const std::string& engine) { set_engine(engine_from(engine)); },
      nb::arg("engine"));
  m.def("set_max_pending_nodes", &set_max_pending_nodes, nb::arg("nodes"));
  m.def("set_max_in_flight", &set_max_in_flight, nb::arg("evaluations"));
  m.def("set_memory_limit", &set_memory_limit, nb::arg("bytes"));
}

}  // namespace lz::python
