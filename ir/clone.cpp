#include "ir/clone.h"

namespace lz::ir {

NodePtr copy_without_inputs(const Node& original) {
  NodePtr node = new_node();
  node->op = original.op;
  node->dtype = original.dtype;
  node->device = original.device;
  node->keepdims = original.keepdims;
  node->shape = original.shape;
  if (original.has_attributes()) node->set_attributes() = original.attributes();
  node->params[0] = original.params[0];
  node->params[1] = original.params[1];
  node->seed = original.seed;
  node->location = original.location;
  return node;
}

Graph clone_graph(const Graph& graph, LocationOverrides* locations) {
  const auto index = graph.index();
  Graph copy;
  copy.nodes.reserve(graph.nodes.size());
  for (const NodePtr& original : graph.nodes) {
    NodePtr node = copy_without_inputs(*original);
    node->buffer = original->buffer;
    node->inputs.reserve(original->inputs.size());
    for (const NodePtr& input : original->inputs) {
      node->inputs.push_back(copy.nodes[index.at(input.get())]);
    }
    if (locations != nullptr) {
      if (const TextLocation* location = locations->find(*original))
        locations->set(node, *location);
    }
    copy.nodes.push_back(std::move(node));
  }
  copy.outputs.reserve(graph.outputs.size());
  for (const NodePtr& output : graph.outputs)
    copy.outputs.push_back(copy.nodes[index.at(output.get())]);
  return copy;
}

}  // namespace lz::ir
