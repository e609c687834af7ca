// Graphviz export of a graph, for looking at it (`dot -Tsvg graph.dot > graph.svg`).
#pragma once

#include <string>

#include "ir/graph.h"
#include "ir/printer.h"

namespace lz::ir {

/// The graph in the DOT language: one box per node labelled `%2 mul`, its attributes and its
/// type, an edge from each input to its consumer (numbered by operand where there are several),
/// leaves filled grey (`data` as a cylinder), outputs outlined in red with their output numbers.
/// A node's source location is its tooltip. Linear time, no recursion.
std::string graph_to_dot(const Graph& graph, const LocationOverrides& locations = {});

}  // namespace lz::ir
