// The structural hash of a graph: the key under which compiled kernels are cached.
#pragma once

#include <cstdint>

#include "ir/graph.h"

namespace lz::ir {

/// A hash of what compiled code depends on: each node's op, dtype and shape, its structural
/// attributes (reduction axes and keepdims, transpose permutation, concatenate axis, slice starts
/// and steps), which earlier node each input is (by position) and which nodes are the outputs, in
/// order. Scalar parameters, seeds, buffers and source locations are left out, so a new learning
/// rate, seed or input array hashes the same. Equal hashes do not prove equal graphs. Linear
/// time, no recursion.
uint64_t structural_hash(const Graph& graph);

}  // namespace lz::ir
