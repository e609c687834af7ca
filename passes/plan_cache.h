// The pipeline's result, reused: a graph recorded again with the same structure (a training
// step, a benchmark loop) takes the optimized graph and kernels of the first one, rebound to its
// own buffers, values and lines, instead of running the passes again.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "passes/pass.h"

namespace lz::passes {

/// A pass context ready to run, and whether it came from the cache.
struct PreparedContext {
  PassContext context;
  bool hit = false;
};

/// Remembered pipeline results, keyed by the structure of the graph they were computed for.
///
/// Two graphs have the same structure when they have the same ops, dtypes, devices, shapes and
/// attributes, wired the same way by position, ask for the same outputs, and agree on what the
/// passes read of their values: each scalar constant's class for the simplifier (zero of either
/// sign, one, a power of two it may fold, finite), and which value-carrying nodes (data leaves
/// by buffer, constants, ranges, random draws by seed, slices by start) are equal to which, for
/// common-subexpression elimination. Buffers, scalar values, seeds, slice starts and lines are
/// not structure: a hit copies them from the new graph into a copy of the remembered result.
///
/// A result in which the passes computed a value (constant folding) holds only for the exact
/// scalar values it was computed from; it is remembered with them and hits only when they
/// recur.
class PlanCache {
 public:
  /// Runs a pipeline over a context (a configured PassManager's run).
  using Pipeline = std::function<void(PassContext&)>;

  /// `capacity`: the most structures remembered; the oldest goes first.
  explicit PlanCache(size_t capacity = 256);
  ~PlanCache();
  PlanCache(const PlanCache&) = delete;
  PlanCache& operator=(const PlanCache&) = delete;

  /// The optimized context for `graph`: a remembered one rebound to `graph`'s values, or `run`
  /// over ir::clone_graph(graph), then remembered. `pipeline` names the passes that `run` runs;
  /// together with `options` it is part of the key. A pipeline that throws remembers nothing.
  /// Results with a schedule or a memory plan are not remembered.
  PreparedContext prepare(const ir::Graph& graph, const std::string& pipeline,
                          const PassOptions& options, const Pipeline& run);

  /// Remembered results (a structure may have several, one per set of folded values).
  size_t size() const;
  void clear();

 private:
  struct Entry;
  using Signature = std::vector<int64_t>;

  size_t capacity_;
  mutable std::mutex mutex_;
  std::unordered_multimap<uint64_t, std::unique_ptr<Entry>> entries_;
  std::deque<std::pair<uint64_t, const Entry*>> age_;  // oldest first
};

}  // namespace lz::passes
