#include "ir/graph.h"

#include <mutex>
#include <utility>

namespace lz::ir {

namespace {

/// Walks mark the nodes they reach (Node::walk), so they run one at a time.
std::mutex walk_mutex;
uint64_t walks = 0;  // under walk_mutex

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
  std::lock_guard lock(walk_mutex);
  // A mark in each node instead of a table of the nodes reached: a table's probes miss the
  // cache at every node of a large graph, and the walk reads the node anyway.
  const uint64_t walk = ++walks;
  // Whether `node` is reached for the first time; its position is set once it is finished,
  // before any consumer reads it.
  const auto reach = [walk](Node& node) {
    if (node.walk == walk) return false;
    node.walk = walk;
    return true;
  };
  // Post-order DFS with an explicit stack: (the node's pointer, index of the next input to
  // visit). The pointers are the outputs' and the consumers' own, copied once into the list.
  std::vector<std::pair<const NodePtr*, size_t>> stack;
  for (const NodePtr& output : outputs) {
    if (!reach(*output)) continue;
    stack.emplace_back(&output, 0);
    while (!stack.empty()) {
      auto& [pointer, next_input] = stack.back();
      Node& node = **pointer;
      const bool leaf = node.is_evaluated();
      if (!leaf && next_input < node.inputs.size()) {
        const NodePtr& input = node.inputs[next_input++];
        if (reach(*input)) stack.emplace_back(&input, 0);
        continue;
      }
      node.walk_position = static_cast<int64_t>(graph.nodes.size());
      if (wiring != nullptr) {
        if (!leaf) {
          for (const NodePtr& input : node.inputs) {
            wiring->inputs.push_back(static_cast<int32_t>(input->walk_position));
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
      wiring->outputs.push_back(static_cast<int32_t>(output->walk_position));
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
