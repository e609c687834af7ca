// The vector-Jacobian product of every op: what the cotangent of a node's result gives each of
// its inputs, recorded as ordinary ops.
#pragma once

#include <source_location>
#include <vector>

#include "ir/node.h"
#include "lazuli/tensor.h"

namespace lz::frontend {

/// The cotangents of the inputs of `forward` (a node's op, attributes and inputs as recorded),
/// given `cotangent`, the cotangent of its result `result`. Recorded at the forward op's line, on
/// its device. Entry i is an empty handle where `wanted[i]` is false; each other entry has its
/// input's shape and dtype.
std::vector<Tensor> input_cotangents(const ir::Node& forward, const Tensor& result,
                                     const Tensor& cotangent, const std::vector<bool>& wanted);

}  // namespace lz::frontend
