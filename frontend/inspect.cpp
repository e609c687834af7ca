// ir_text and ir_dot: the graph behind tensors, without evaluating anything.
#include "frontend/recording.h"
#include "ir/dot.h"
#include "ir/graph.h"
#include "ir/printer.h"
#include "lazuli/inspect.h"

namespace lz {
namespace {

ir::Graph graph_of(const std::vector<Tensor>& outputs, std::string_view op) {
  std::vector<ir::NodePtr> roots;
  roots.reserve(outputs.size());
  for (const Tensor& tensor : outputs) roots.push_back(frontend::node_of(tensor, op));
  return ir::Graph::collect(roots);
}

}  // namespace

std::string ir_text(const std::vector<Tensor>& outputs) {
  return ir::print_graph(graph_of(outputs, "ir_text"));
}

std::string ir_dot(const std::vector<Tensor>& outputs) {
  return ir::graph_to_dot(graph_of(outputs, "ir_dot"));
}

}  // namespace lz
