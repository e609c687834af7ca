#include "ir/graph.h"

#include <unordered_set>

namespace lz::ir {

Graph Graph::collect(std::span<const NodePtr> outputs) {
  Graph graph;
  graph.outputs.assign(outputs.begin(), outputs.end());
  std::unordered_set<const Node*> visited;
  // Post-order DFS with an explicit stack: (node, index of the next input to visit).
  std::vector<std::pair<Node*, size_t>> stack;
  for (const NodePtr& output : outputs) {
    if (!visited.insert(output.get()).second) continue;
    stack.emplace_back(output.get(), 0);
    while (!stack.empty()) {
      auto& [node, next_input] = stack.back();
      if (!node->is_evaluated() && next_input < node->inputs.size()) {
        Node* input = node->inputs[next_input++].get();
        if (visited.insert(input).second) stack.emplace_back(input, 0);
        continue;
      }
      graph.nodes.push_back(node->shared_from_this());
      stack.pop_back();
    }
  }
  return graph;
}

std::unordered_map<const Node*, int64_t> Graph::index() const {
  std::unordered_map<const Node*, int64_t> positions;
  positions.reserve(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) positions.emplace(nodes[i].get(), i);
  return positions;
}

}  // namespace lz::ir
