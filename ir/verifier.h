// Structural checks of a graph, for tests, debugging and the boundaries between passes.
#pragma once

#include "ir/graph.h"

namespace lz::ir {

/// Throws lz::Error "[verify] ..." naming the first problem (nodes by position, `%4 (add)`):
/// a null or duplicate node, an input that is not an earlier node of the graph, an output that is
/// not in the graph, a wrong number of inputs, or a dtype/shape other than infer_type gives.
/// Buffers are runtime objects: reference::interpret_node checks them against their nodes.
/// Linear time, no recursion.
void verify(const Graph& graph);

}  // namespace lz::ir
