// Dead-code elimination as a function, for the passes that leave unused nodes behind them.
#pragma once

#include "ir/graph.h"

namespace lz::passes::detail {

/// Drops from graph.nodes every node that graph.outputs do not reach, keeping the order of the
/// rest. Linear time, no recursion. Returns the number of nodes removed.
int64_t remove_unreachable_nodes(ir::Graph& graph);

}  // namespace lz::passes::detail
