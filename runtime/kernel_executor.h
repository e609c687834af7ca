// Runs an optimized pipeline's kernels. Until the JITs land, each kernel is interpreted node by
// node: the results must equal interpreting the unoptimized graph.
#pragma once

#include <memory>
#include <vector>

#include "passes/pass.h"
#include "runtime/buffer.h"

namespace lz::runtime {

/// Computes the outputs of `context.graph`: kernel by kernel when fusion ran (in the schedule's
/// order when there is one), else node by node. Running out of memory raises lz::Error naming
/// the op and the line that recorded it. Data leaves must hold buffers. Returns one buffer
/// per graph output, in order. Counts kernels_launched in lz::stats().
std::vector<std::shared_ptr<Buffer>> execute(const passes::PassContext& context);

}  // namespace lz::runtime
