// The reference interpreter: every op computed with plain loops over contiguous buffers.
//
// It is the specification of each op's values: every compiled path (fused, JIT-compiled, on any
// device) is tested against it, so it is written to be obviously right rather than fast.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "ir/graph.h"
#include "ir/node.h"
#include "memory/buffer.h"

namespace lz::reference {

/// Computes the result of one node from its inputs' buffers (inputs in node.inputs order).
std::shared_ptr<memory::Buffer> interpret_node(const ir::Node& node,
                                               std::span<const memory::Buffer* const> inputs);

/// Computes every node of `graph` in order with plain loops. Nodes that are already evaluated
/// (node->buffer set; that includes all `data` leaves) are used as they are. keep[i] says whether
/// the result of graph.nodes[i] must survive; any other result is freed right after its last
/// consumer in the graph has run. Returns one buffer per graph node (null for the freed ones).
std::vector<std::shared_ptr<memory::Buffer>> interpret(const ir::Graph& graph,
                                                       const std::vector<bool>& keep);

}  // namespace lz::reference
