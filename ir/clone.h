// A private copy of a graph, for passes to rewrite without touching the nodes users hold.
#pragma once

#include "ir/graph.h"
#include "ir/printer.h"

namespace lz::ir {

/// A new node with `original`'s op, type, attributes, params and location, but no inputs and no
/// buffer.
NodePtr copy_without_inputs(const Node& original);

/// Copies every node of `graph` (evaluated leaves share their buffer, not a copy of it). The
/// copy's outputs are the copies of graph.outputs, in the same positions, so results computed for
/// the copy can be handed back to the original nodes by position. With `locations`, each
/// original's entry there is also set for its copy (a parsed graph's lines stay with the copy).
Graph clone_graph(const Graph& graph, LocationOverrides* locations = nullptr);

}  // namespace lz::ir
