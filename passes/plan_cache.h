// The pipeline's result, reused: a graph recorded again with the same structure (a training
// step, a benchmark loop) takes the optimized graph and kernels of the first one, rebound to its
// own buffers, values and lines, instead of running the passes again.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "passes/pass.h"

namespace lz::passes {

/// Remembered pipeline results, keyed by the structure of the graph they were computed for.
///
/// Two graphs have the same structure when they have the same ops, dtypes, devices, shapes and
/// attributes, wired the same way by position, ask for the same outputs, and agree on what the
/// passes read of their values: each scalar constant's class for the simplifier (zero of either
/// sign, one, a power of two it may fold, finite), and which value-carrying nodes (data leaves
/// by buffer, constants, ranges, random draws by seed, slices by start) are equal to which, for
/// common-subexpression elimination, and the order in which collectives were recorded.
/// Buffers, scalar values, seeds (and collectives' sequence numbers), slice starts and lines are
/// not structure: a hit copies them from the new graph into a copy of the remembered result.
///
/// A result in which the passes computed a value (constant folding) holds only for the values
/// of the constants they may have read to compute it: the constant inputs of the nodes they
/// rewrote, through nodes they took away, and of an add or mul chain they folded. It is
/// remembered with those and hits only when they recur; other constants, such as an optimizer's
/// step size, which changes at every step, stay free.
class PlanCache {
  struct Entry;

 public:
  /// Runs a pipeline over a context (a configured PassManager's run).
  using Pipeline = std::function<void(PassContext&)>;

  /// At most `capacity` results, holding at most `node_capacity` nodes in all (a few hundred
  /// bytes each), are remembered; the oldest go first, and a result larger than `node_capacity`
  /// is not remembered.
  explicit PlanCache(size_t capacity = 256, size_t node_capacity = 200'000);
  ~PlanCache();
  PlanCache(const PlanCache&) = delete;
  PlanCache& operator=(const PlanCache&) = delete;

  /// What look_up found for a graph: a context ready to run, or a private copy of the graph
  /// for complete to run the passes on.
  class Lookup {
   public:
    Lookup();
    ~Lookup();
    Lookup(Lookup&&) noexcept;
    Lookup& operator=(Lookup&&) noexcept;
    bool hit() const { return hit_.has_value(); }

   private:
    friend class PlanCache;
    std::shared_ptr<const Entry> entry_;  // on a hit: where give_back returns the context
    std::vector<int64_t> signature_;
    uint64_t hash_ = 0;
    std::string pipeline_;
    PassOptions options_;
    std::optional<PassContext> hit_;
    ir::Graph copy_;  // on a miss: a copy of the recorded graph, for the passes
    bool remembered_ = true;
  };

  /// Looks `graph`, whose edges are `wiring`, up: on a hit, a copy of the remembered result
  /// rebound to `graph`'s values. `pipeline` names the passes that will run on a miss; with
  /// `options` it is part of the key. Reads `graph`'s nodes, so it runs where they cannot
  /// change (under the graph lock); the Lookup holds nothing of them but buffers.
  Lookup look_up(const ir::Graph& graph, const ir::Wiring& wiring, const std::string& pipeline,
                 const PassOptions& options) const;

  /// A lookup that never hits and whose result complete does not remember: the passes run on a
  /// copy of `graph` (taken here, under the caller's lock).
  static Lookup uncached(const ir::Graph& graph, const PassOptions& options);

  /// The context to run: a hit's, or `run` over a copy of the recorded graph, whose result is
  /// then remembered. Safe on any thread. A pipeline that throws remembers nothing; results with
  /// a schedule are not remembered.
  PassContext complete(Lookup lookup, const Pipeline& run);

  /// A hit's context once it has run, or nothing: what give_back needs to know where it goes.
  class Origin {
   public:
    Origin() = default;

   private:
    friend class PlanCache;
    std::shared_ptr<const Entry> entry_;
  };
  static Origin origin_of(const Lookup& lookup) {
    Origin origin;
    origin.entry_ = lookup.entry_;
    return origin;
  }

  /// Takes back a hit's context that has run and that nothing else holds a node of, to be
  /// rebound by the next hit of its structure instead of copying the result again: a loop pays
  /// for no node of a remembered graph. Anything else is freed.
  void give_back(Origin origin, PassContext context);

  /// Remembered results (a structure may have several, one per set of folded values), and the
  /// nodes they hold.
  size_t size() const;
  size_t nodes() const;
  void clear();

 private:
  using Signature = std::vector<int64_t>;

  /// Marks `entry` dropped from the cache and stops counting its spare; under mutex_.
  void drop(const Entry& entry);

  size_t capacity_;
  size_t node_capacity_;
  mutable std::mutex mutex_;
  size_t nodes_ = 0;  // in the remembered results
  std::unordered_multimap<uint64_t, std::shared_ptr<Entry>> entries_;
  /// Nodes in contexts given back, kept for reuse: at most node_capacity_ / 2.
  mutable size_t spare_nodes_ = 0;                     // under mutex_; a hit (const) takes a spare
  std::deque<std::pair<uint64_t, const Entry*>> age_;  // oldest first
};

}  // namespace lz::passes
