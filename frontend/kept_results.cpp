#include "frontend/kept_results.h"

#include <cstdint>

#include "frontend/evaluation.h"
#include "ir/op.h"

namespace lz::frontend {
namespace {

/// An op whose result is cheap to compute again from its inputs: elementwise, movement (index
/// arithmetic inside a kernel) or a generated leaf (full, arange, counter-based random).
bool is_cheap_to_recompute(const ir::Node& node) {
  switch (ir::op_info(node.op).kind) {
    case ir::OpKind::Unary:
    case ir::OpKind::Binary:
    case ir::OpKind::Ternary:
    case ir::OpKind::Movement: return true;
    case ir::OpKind::Leaf: return node.op != ir::Op::Data;
    case ir::OpKind::Reduction:
    case ir::OpKind::LinearAlgebra:
    case ir::OpKind::Collective: return false;  // computing one twice would desync the ranks
  }
  return false;
}

}  // namespace

KeptResults results_to_keep(const ir::Graph& graph, const ir::Wiring& wiring) {
  // References held by the graph itself: its node list, its consumers' inputs, its outputs.
  std::vector<long> internal(graph.nodes.size(), 1);
  for (int32_t input : wiring.inputs) ++internal[input];
  std::vector<bool> requested(graph.nodes.size(), false);
  for (int32_t output : wiring.outputs) {
    ++internal[output];
    requested[output] = true;
  }
  const bool targeted = !graph.outputs.empty();
  KeptResults result;
  result.keep.assign(graph.nodes.size(), false);
  // Recomputable later from what exists after this evaluation, by cheap ops only.
  std::vector<bool> recomputable(graph.nodes.size(), false);
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const ir::Node& node = *graph.nodes[i];
    // A reused number operand is held by recording, for the next op that reads the number.
    const bool held = graph.nodes[i].use_count() > internal[i] && !node.reused_constant;
    if (node.is_evaluated()) {
      result.keep[i] = held;
      continue;
    }
    bool cheap = is_cheap_to_recompute(node) && !node.left_pending;
    for (int32_t j : wiring.inputs_of(i)) {
      cheap = cheap && (graph.nodes[j]->is_evaluated() || result.keep[j] || recomputable[j]);
    }
    recomputable[i] = cheap;
    result.keep[i] = held && (!targeted || requested[i] || !cheap);
    if (held && !result.keep[i]) result.left.push_back(graph.nodes[i].get());
  }
  return result;
}

void keep_when_computed(const std::vector<Tensor>& tensors) {
  const auto lock = lock_graph();  // evaluations read and set the flag under it
  for (const Tensor& tensor : tensors) {
    if (tensor.node() && !tensor.node()->is_evaluated()) tensor.node()->left_pending = true;
  }
}

bool only_kept_results_need(const ir::Graph& graph, const ir::Wiring& wiring,
                            const std::vector<bool>& keep) {
  std::vector<bool> needed(graph.nodes.size(), false);
  for (size_t i = graph.nodes.size(); i-- > 0;) {
    if (keep[i] && !graph.nodes[i]->is_evaluated()) needed[i] = true;
    if (!needed[i]) return false;
    for (int32_t input : wiring.inputs_of(i)) needed[input] = true;
  }
  return true;
}

}  // namespace lz::frontend
