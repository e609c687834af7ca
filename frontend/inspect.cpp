// ir_text and ir_dot: the graph behind tensors, without evaluating anything; starting and
// stopping a Chrome trace (support/trace.h records it).
#include "lazuli/inspect.h"
#include "frontend/evaluation.h"
#include "frontend/recording.h"
#include "ir/dot.h"
#include "ir/printer.h"
#include "support/trace.h"

namespace lz {
namespace {

std::string describe(const std::vector<Tensor>& outputs, std::string_view op,
                     std::string (*describe_graph)(const ir::Graph&), std::source_location loc) {
  std::vector<ir::NodePtr> roots;
  roots.reserve(outputs.size());
  for (const Tensor& tensor : outputs) roots.push_back(frontend::node_of(tensor, op, loc));
  return frontend::describe_pending(std::move(roots), describe_graph);
}

}  // namespace

std::string ir_text(const std::vector<Tensor>& outputs, std::source_location loc) {
  return describe(
      outputs, "ir_text", [](const ir::Graph& graph) { return ir::print_graph(graph); }, loc);
}

std::string ir_dot(const std::vector<Tensor>& outputs, std::source_location loc) {
  return describe(
      outputs, "ir_dot", [](const ir::Graph& graph) { return ir::graph_to_dot(graph); }, loc);
}

void start_trace(const std::string& path) { support::trace::start(path); }

void stop_trace() { support::trace::stop(); }

}  // namespace lz
