// Runs an optimized pipeline's kernels: compiled by the CPU JIT (codegen/cpu/) by default, or
// interpreted node by node (the reference) when the JIT is off or cannot lower a kernel (unless
// strict, when such a kernel fails). Either way the results must equal interpreting the
// unoptimized graph.
#pragma once

#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "lazuli/device.h"
#include "lazuli/log_level.h"
#include "memory/buffer.h"
#include "plan/fusion_plan.h"

namespace lz::runtime {

struct ExecutionOptions {
  bool jit = true;                     // compile kernels (LZ_JIT)
  bool jit_strict = false;             // LZ_JIT=strict: a kernel the JIT refuses fails
  std::string cache_directory;         // the disk kernel cache; empty: memory only
  LogLevel log_level = LogLevel::Off;  // Info: one line per kernel launch
  std::string dump_directory;          // when set, each compiled kernel's IR and assembly go there
  Device device = Device::cpu();       // a CUDA device runs the kernels there (runtime/cuda/)
  int stream = 0;                      // the device's stream, for a CUDA device
  /// On the CPU, an output of at least this many bytes is written over an input of its dtype
  /// and size that nothing reads after its kernel, instead of into new memory (an optimizer's
  /// new state over the old); negative: never. Smaller buffers come from the buffer cache.
  int64_t in_place_from_bytes = int64_t{1} << 20;
  /// Asked before each kernel when set: true once nothing can read the results any more. The
  /// kernels left are then not run, and every output fails as cancelled. Never asked of a plan
  /// with a collective, which the other ranks wait for.
  std::function<bool()> unread;
};

/// What became of one graph output: its buffer, or why it could not be computed.
struct Outcome {
  std::shared_ptr<memory::Buffer> buffer;  // null when `error` is set
  std::exception_ptr error;  // an lz::Error naming the op and the line that recorded it
  bool cancelled = false;    // `error` says the work was cancelled (ExecutionOptions::unread)
};

/// Computes the outputs of `graph`: kernel by kernel in the order of `fusion` (the plan fusion
/// made, which puts each kernel after those it reads), or node by node when `fusion` is null. Data
/// leaves whose buffers are promised wait for them. A kernel that fails (running out of memory, a
/// failed input) fails only the outputs that depend on it; the others are computed. Returns one
/// outcome per graph output, in order. Counts kernels_launched, kernels_interpreted and
/// kernels_cancelled in lz::stats().
std::vector<Outcome> execute_each(const ir::Graph& graph, const plan::FusionPlan* fusion,
                                  const ExecutionOptions& options = {});

/// execute_each's buffers; throws the first failure instead.
std::vector<std::shared_ptr<memory::Buffer>> execute(const ir::Graph& graph,
                                                     const plan::FusionPlan* fusion,
                                                     const ExecutionOptions& options = {});

}  // namespace lz::runtime
