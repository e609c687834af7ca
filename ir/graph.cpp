#include "ir/graph.h"

#include <utility>

namespace lz::ir {

namespace {

/// A reached node's position while the walk has not finished it yet.
constexpr int64_t kUnfinished = -1;

}  // namespace

Graph Graph::collect(std::span<const NodePtr> outputs, Wiring* wiring, size_t expected_nodes) {
  Graph graph;
  graph.outputs.assign(outputs.begin(), outputs.end());
  graph.nodes.reserve(expected_nodes);
  if (wiring != nullptr) {
    *wiring = Wiring();
    wiring->input_begin.reserve(expected_nodes + 1);
    wiring->inputs.reserve(2 * expected_nodes);
  }
  // Every node reached, at its position in graph.nodes once the walk has finished it.
  NodePositions reached;
  reached.reserve(expected_nodes);
  // Post-order DFS with an explicit stack: (the node's pointer, index of the next input to
  // visit). The pointers are the outputs' and the consumers' own, copied once into the list.
  std::vector<std::pair<const NodePtr*, size_t>> stack;
  for (const NodePtr& output : outputs) {
    if (!reached.insert(output.get(), kUnfinished)) continue;
    stack.emplace_back(&output, 0);
    while (!stack.empty()) {
      auto& [pointer, next_input] = stack.back();
      const Node& node = **pointer;
      const bool leaf = node.is_evaluated();
      if (!leaf && next_input < node.inputs.size()) {
        const NodePtr& input = node.inputs[next_input++];
        if (reached.insert(input.get(), kUnfinished)) stack.emplace_back(&input, 0);
        continue;
      }
      reached.assign(&node, static_cast<int64_t>(graph.nodes.size()));
      if (wiring != nullptr) {
        if (!leaf) {
          for (const NodePtr& input : node.inputs) {
            wiring->inputs.push_back(static_cast<int32_t>(reached.at(input.get())));
          }
        }
        wiring->input_begin.push_back(static_cast<int32_t>(wiring->inputs.size()));
      }
      graph.nodes.push_back(*pointer);
      stack.pop_back();
    }
  }
  if (wiring != nullptr) {
    wiring->outputs.reserve(outputs.size());
    for (const NodePtr& output : outputs) {
      wiring->outputs.push_back(static_cast<int32_t>(reached.at(output.get())));
    }
  }
  return graph;
}

NodePositions Graph::index() const { return NodePositions(nodes); }

Wiring Wiring::of(const Graph& graph) {
  const NodePositions index = graph.index();
  Wiring wiring;
  wiring.input_begin.reserve(graph.nodes.size() + 1);
  for (const NodePtr& node : graph.nodes) {
    if (!node->is_evaluated()) {
      for (const NodePtr& input : node->inputs) {
        wiring.inputs.push_back(static_cast<int32_t>(index.at(input.get())));
      }
    }
    wiring.input_begin.push_back(static_cast<int32_t>(wiring.inputs.size()));
  }
  for (const NodePtr& output : graph.outputs) {
    wiring.outputs.push_back(static_cast<int32_t>(index.at(output.get())));
  }
  return wiring;
}

}  // namespace lz::ir
