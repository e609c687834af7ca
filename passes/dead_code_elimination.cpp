// "dce": removes the nodes that no output needs.
//
// graph.nodes is a topological order, so one backward sweep marks everything reachable: when a
// node is reached, all of its consumers come after it and have already been seen.
#include "passes/dead_code_elimination.h"

#include "ir/node_positions.h"
#include "passes/pass.h"

namespace lz::passes {
namespace detail {

int64_t remove_unreachable_nodes(ir::Graph& graph) {
  ir::NodePositions reachable;
  reachable.reserve(graph.nodes.size());
  for (const ir::NodePtr& output : graph.outputs) reachable.add(output.get());
  for (auto node = graph.nodes.rbegin(); node != graph.nodes.rend(); ++node) {
    if (!reachable.contains(node->get())) continue;
    for (const ir::NodePtr& input : (*node)->inputs) reachable.add(input.get());
  }
  const auto before = static_cast<int64_t>(graph.nodes.size());
  std::erase_if(graph.nodes,
                [&](const ir::NodePtr& node) { return !reachable.contains(node.get()); });
  return before - static_cast<int64_t>(graph.nodes.size());
}

}  // namespace detail

namespace {

class DeadCodeElimination final : public Pass {
 public:
  std::string_view name() const override { return "dce"; }
  void run(PassContext& context) override { detail::remove_unreachable_nodes(context.graph); }
};

}  // namespace

std::unique_ptr<Pass> make_dead_code_elimination() {
  return std::make_unique<DeadCodeElimination>();
}

}  // namespace lz::passes
