// A recorded graph's structure as a list of numbers: what the plan cache (passes/plan_cache.h)
// finds a remembered pipeline result by. Everything the passes' decisions depend on is in it
// (ops, dtypes, devices, shapes, axes, wiring, which constants fold, which value carriers are
// equal, the order of collectives); the values a new recording may change are not.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/graph.h"
#include "ir/node.h"
#include "passes/pass.h"

namespace lz::passes {

/// Whether `node` holds values a new recording of the same structure may change: a buffer, a
/// scalar, a seed, a collective's sequence number or a slice start.
bool carries_values(const ir::Node& node);

/// Whether two scalars have the same bits (NaNs and signed zeros told apart).
bool same_bits(const ir::ScalarParam& a, const ir::ScalarParam& b);

/// The signature of `graph` (with its `wiring`) under `options`. The small fields of a node
/// share one number: a signature is built, hashed and compared at every evaluation.
std::vector<int64_t> graph_signature(const ir::Graph& graph, const ir::Wiring& wiring,
                                     const PassOptions& options);

uint64_t signature_hash(const std::vector<int64_t>& signature);

}  // namespace lz::passes
