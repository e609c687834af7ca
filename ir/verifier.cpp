#include "ir/verifier.h"

#include <string>

#include "ir/node_positions.h"
#include "ir/printer.h"
#include "ir/type_inference.h"
#include "lazuli/error.h"

namespace lz::ir {
namespace {

[[noreturn]] void fail(const std::string& message) { throw Error("[verify] " + message); }

// "%4 (add)"
std::string describe(int64_t position, const Node& node) {
  return "%" + std::to_string(position) + " (" + std::string(op_name(node.op)) + ")";
}

}  // namespace

void verify(const Graph& graph) {
  NodePositions positions;
  positions.reserve(graph.nodes.size());
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node* node = graph.nodes[i].get();
    const auto position = static_cast<int64_t>(i);
    if (node == nullptr) fail("%" + std::to_string(position) + " is null");
    if (!positions.insert(node, position)) {
      fail(describe(position, *node) + " is the same node as %" +
           std::to_string(positions.at(node)) + "; a graph lists each node once");
    }
  }

  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node& node = *graph.nodes[i];
    const auto position = static_cast<int64_t>(i);
    // Built only for a message: verify runs over every node of large graphs.
    const auto name = [&] { return describe(position, node); };
    const int arity = op_info(node.op).arity;
    const auto input_count = static_cast<int>(node.inputs.size());
    if ((arity >= 0 && input_count != arity) || (arity < 0 && input_count == 0)) {
      fail(name() + " has " + std::to_string(input_count) + " inputs but " +
           std::string(op_name(node.op)) + " takes " +
           (arity >= 0 ? std::to_string(arity) : std::string("at least 1")));
    }
    for (int k = 0; k < input_count; ++k) {
      const Node* input = node.inputs[k].get();
      const auto which = [&] { return name() + " input " + std::to_string(k); };
      if (input == nullptr) fail(which() + " is null");
      const auto found = positions.find(input);
      if (found == positions.end()) fail(which() + " is not a node of the graph");
      if (found->second >= position) {
        fail(which() + " is %" + std::to_string(found->second) +
             ", which does not come before it; nodes must be in topological order");
      }
    }

    TensorType inferred{};
    try {
      inferred = infer_type(node);
    } catch (const Error& error) {
      fail(name() + " is invalid: " + error.what());
    }
    if (inferred.dtype != node.dtype || inferred.shape != node.shape) {
      fail(name() + " is recorded as " + type_text(node.dtype, node.shape) +
           " but its inputs give " + type_text(inferred.dtype, inferred.shape));
    }
  }

  for (size_t k = 0; k < graph.outputs.size(); ++k) {
    const Node* output = graph.outputs[k].get();
    if (output == nullptr) fail("output " + std::to_string(k) + " is null");
    if (!positions.contains(output)) {
      fail("output " + std::to_string(k) + " (" + std::string(op_name(output->op)) +
           ") is not a node of the graph");
    }
  }
}

}  // namespace lz::ir
