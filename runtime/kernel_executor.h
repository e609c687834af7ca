// Runs an optimized pipeline's kernels: compiled by the CPU JIT (codegen/cpu/) by default, or
// interpreted node by node (the reference) when the JIT is off or cannot lower a kernel. Either
// way the results must equal interpreting the unoptimized graph.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "lazuli/settings.h"
#include "passes/pass.h"
#include "runtime/buffer.h"

namespace lz::runtime {

struct ExecutionOptions {
  bool jit = true;                     // compile kernels (LZ_JIT)
  std::string cache_directory;         // the disk kernel cache; empty: memory only
  LogLevel log_level = LogLevel::Off;  // Info: one line per kernel launch
  std::string dump_directory;          // when set, each compiled kernel's IR and assembly go there
};

/// Computes the outputs of `context.graph`: kernel by kernel when fusion ran (in the schedule's
/// order when there is one), else node by node. Running out of memory raises lz::Error naming
/// the op and the line that recorded it. Data leaves must hold buffers. Returns one buffer
/// per graph output, in order. Counts kernels_launched in lz::stats().
std::vector<std::shared_ptr<Buffer>> execute(const passes::PassContext& context,
                                             const ExecutionOptions& options = {});

}  // namespace lz::runtime
