#include "ir/graph.h"

namespace lz::ir {

Graph Graph::collect(std::span<const NodePtr> outputs) {
  Graph graph;
  graph.outputs.assign(outputs.begin(), outputs.end());
  NodePositions reached;
  // Post-order DFS with an explicit stack: (node, index of the next input to visit).
  std::vector<std::pair<Node*, size_t>> stack;
  for (const NodePtr& output : outputs) {
    if (!reached.add(output.get())) continue;
    stack.emplace_back(output.get(), 0);
    while (!stack.empty()) {
      auto& [node, next_input] = stack.back();
      if (!node->is_evaluated() && next_input < node->inputs.size()) {
        Node* input = node->inputs[next_input++].get();
        if (reached.add(input)) stack.emplace_back(input, 0);
        continue;
      }
      graph.nodes.push_back(node->shared_from_this());
      stack.pop_back();
    }
  }
  return graph;
}

NodePositions Graph::index() const { return NodePositions(nodes); }

}  // namespace lz::ir
