// A graph to evaluate or inspect: the pending nodes behind some outputs, in topological order.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "ir/node.h"
#include "ir/node_positions.h"

namespace lz::ir {

struct Wiring;

struct Graph {
  /// Every node, inputs before their consumers. Evaluated nodes appear as leaves.
  std::vector<NodePtr> nodes;
  /// The values asked for, in the order given (a node may appear twice).
  std::vector<NodePtr> outputs;

  /// The graph that computes `outputs`: an iterative walk, so graphs of any depth are fine.
  /// The walk stops at evaluated nodes, which become leaves. With `wiring`, also fills it in
  /// for the graph; `expected_nodes` sizes the lists up front. Walks mark the nodes they
  /// reach, so one runs at a time (collect takes a lock of its own).
  static Graph collect(std::span<const NodePtr> outputs, Wiring* wiring = nullptr,
                       size_t expected_nodes = 0);

  /// Position of each node in `nodes`.
  NodePositions index() const;
};

/// A graph's edges as positions in its node list: each node's inputs and each output. The
/// walks an evaluation makes over the graph it collected (what to keep, the plan cache's
/// signature) read these instead of looking every input up by its address.
struct Wiring {
  /// Node i reads inputs[input_begin[i]] .. inputs[input_begin[i + 1] - 1]; evaluated nodes,
  /// leaves of the graph, read none.
  std::vector<int32_t> input_begin{0};
  std::vector<int32_t> inputs;
  std::vector<int32_t> outputs;

  std::span<const int32_t> inputs_of(size_t position) const {
    return {inputs.data() + input_begin[position],
            static_cast<size_t>(input_begin[position + 1] - input_begin[position])};
  }

  /// The wiring of any graph, by looking each input up.
  static Wiring of(const Graph& graph);
};

}  // namespace lz::ir
