// A graph to evaluate or inspect: the pending nodes behind some outputs, in topological order.
#pragma once

#include <span>
#include <vector>

#include "ir/node.h"
#include "ir/node_positions.h"

namespace lz::ir {

struct Graph {
  /// Every node, inputs before their consumers. Evaluated nodes appear as leaves.
  std::vector<NodePtr> nodes;
  /// The values asked for, in the order given (a node may appear twice).
  std::vector<NodePtr> outputs;

  /// The graph that computes `outputs`: an iterative walk, so graphs of any depth are fine.
  /// The walk stops at evaluated nodes, which become leaves.
  static Graph collect(std::span<const NodePtr> outputs);

  /// Position of each node in `nodes`.
  NodePositions index() const;
};

}  // namespace lz::ir
