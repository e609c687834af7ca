#include "passes/plan_cache.h"

#include <algorithm>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/clone.h"
#include "passes/constant_folding.h"
#include "passes/graph_signature.h"
#include "plan/fusion_plan.h"
#include "plan/kernel_signature.h"

namespace lz::passes {
namespace {

/// The params of the foldable constants at `positions` of `nodes`: what a result with folded
/// values is for.
std::vector<ir::ScalarParam> params_at(const std::vector<ir::NodePtr>& nodes,
                                       const std::vector<int32_t>& positions) {
  std::vector<ir::ScalarParam> values;
  values.reserve(2 * positions.size());
  for (int32_t position : positions) {
    const ir::Node& node = *nodes[position];
    values.insert(values.end(), {node.params[0], node.params[1]});
  }
  return values;
}

/// What the passes may change of a recorded node: its op and values (passes/simplification.cpp
/// rewrites nodes in place).
struct RecordedValues {
  ir::Op op;
  DType dtype;
  Shape shape;
  const memory::Buffer* buffer;
  ir::ScalarParam params[2];
  uint64_t seed;
  std::vector<int64_t> starts;
  ir::CollectiveAttributes collective;

  explicit RecordedValues(const ir::Node& node)
      : op(node.op),
        dtype(node.dtype),
        shape(node.shape),
        buffer(node.buffer.get()),
        params{node.params[0], node.params[1]},
        seed(node.seed),
        starts(node.starts()),
        collective(node.collective()) {}

  /// Whether `other` recorded the same op, type and values.
  bool same_as(const RecordedValues& other) const {
    return op == other.op && dtype == other.dtype && shape == other.shape &&
           buffer == other.buffer && same_bits(params[0], other.params[0]) &&
           same_bits(params[1], other.params[1]) && seed == other.seed && starts == other.starts &&
           collective == other.collective;
  }

  /// Whether `node` still is this op with these values.
  bool unchanged_in(const ir::Node& node) const {
    return node.op == op && node.buffer.get() == buffer && same_bits(node.params[0], params[0]) &&
           same_bits(node.params[1], params[1]) && node.seed == seed && node.starts() == starts &&
           node.collective() == collective;
  }
};

/// The positions of the foldable constants whose values the passes may have computed new values
/// from: the constant inputs of every recorded node that did not come through the passes as it
/// was (a node folded, rewritten or merged away), and constants changed in place. Only these
/// values must match for a remembered result to hold: in a training step the optimizer's
/// scalars change at every step, while the gradient's seed (1 / batch) is what folds.
std::vector<int32_t> folding_sources(const std::vector<ir::NodePtr>& clones,
                                     const std::vector<RecordedValues>& recorded,
                                     const std::vector<std::vector<ir::Node*>>& recorded_inputs,
                                     const PassContext& optimized) {
  std::unordered_map<const ir::Node*, int32_t> position;
  position.reserve(clones.size());
  for (size_t i = 0; i < clones.size(); ++i) {
    position.emplace(clones[i].get(), static_cast<int32_t>(i));
  }
  std::vector<bool> present(clones.size(), false);
  std::vector<bool> survived(clones.size(), false);
  for (const ir::NodePtr& node : optimized.graph.nodes) {
    const auto found = position.find(node.get());
    if (found == position.end()) continue;
    present[found->second] = true;
  }
  // An input replaced by an equal recorded node (common-subexpression elimination merging two
  // equal constants) is the same input.
  const auto same_input = [&](const ir::Node* before, const ir::Node* now) {
    if (before == now) return true;
    const auto was = position.find(before);
    const auto is = position.find(now);
    return is != position.end() && !present[was->second] && present[is->second] &&
           recorded[was->second].same_as(recorded[is->second]);
  };
  for (const ir::NodePtr& node : optimized.graph.nodes) {
    const auto found = position.find(node.get());
    if (found == position.end()) continue;
    const std::vector<ir::Node*>& inputs = recorded_inputs[found->second];
    survived[found->second] = recorded[found->second].unchanged_in(*node) &&
                              node->inputs.size() == inputs.size() &&
                              std::equal(inputs.begin(), inputs.end(), node->inputs.begin(),
                                         [&](const ir::Node* before, const ir::NodePtr& now) {
                                           return same_input(before, now.get());
                                         });
  }
  // As recorded: the passes rewrite clones in place.
  const auto was_constant = [&](size_t i) {
    return recorded[i].op == ir::Op::Full && recorded[i].buffer == nullptr;
  };
  // What a rewrite of node i may have read: its recorded inputs' constants; through an input
  // the passes took away (forwarded, merged), that input's own inputs; and, in a surviving add or
  // mul it reads, that node's constants ((x * a) * b -> x * (a * b) reads a, from x * a, which
  // may stay alive for another reader).
  std::vector<bool> source(clones.size(), false);
  std::vector<bool> visited(clones.size(), false);
  std::vector<int32_t> pending;
  for (size_t i = 0; i < clones.size(); ++i) {
    if (survived[i]) continue;
    for (const ir::Node* input : recorded_inputs[i]) pending.push_back(position.at(input));
    while (!pending.empty()) {
      const int32_t at = pending.back();
      pending.pop_back();
      if (visited[at]) continue;
      visited[at] = true;
      if (was_constant(at)) {
        source[at] = true;
        continue;
      }
      const bool chained = recorded[at].op == ir::Op::Add || recorded[at].op == ir::Op::Mul;
      for (const ir::Node* input : recorded_inputs[at]) {
        const int32_t inner = position.at(input);
        if (!present[at]) {
          pending.push_back(inner);
        } else if (chained && was_constant(inner)) {
          source[inner] = true;
        }
      }
    }
  }
  std::vector<int32_t> positions;
  for (size_t i = 0; i < clones.size(); ++i) {
    if (source[i]) positions.push_back(static_cast<int32_t>(i));
  }
  return positions;
}

}  // namespace

/// A remembered pipeline result.
struct PlanCache::Entry {
  /// A node of the result that is a node of the recorded graph, passed through the passes.
  struct Binding {
    int32_t result = 0;    // position in `graph`
    int32_t recorded = 0;  // position in the recorded graph
    bool values = false;   // an unchanged value carrier: its values come from the recording
  };
  /// A kernel of the fusion plan, by positions in `graph`.
  struct KernelNodes {
    int id = 0;
    std::vector<int32_t> nodes, inputs, outputs;
    /// Shared with every kernel instantiated from this one: hits derive its keys once.
    std::shared_ptr<plan::KernelDescription> description =
        std::make_shared<plan::KernelDescription>();
    int epilogue = -1;
  };

  Signature signature;
  std::string pipeline;
  PassOptions options;
  /// Set when the passes computed values from constants: the result holds only for the values
  /// of those the passes read to compute them, at these positions of the recorded graph.
  bool folded = false;
  std::vector<int32_t> folded_positions;
  std::vector<ir::ScalarParam> folded_from;
  /// The optimized graph's nodes without inputs or buffers, each node's inputs and the outputs
  /// by position, the kernels over them, and where the values come from.
  std::vector<ir::NodePtr> nodes;
  std::vector<std::vector<int32_t>> inputs;
  std::vector<int32_t> outputs;
  bool fused = false;
  std::vector<KernelNodes> kernels;
  std::vector<Binding> bindings;
  /// How many references a copy's own structure holds to each of its nodes: its node list,
  /// consumers, outputs and kernels. A copy given back whose nodes have more is held elsewhere.
  std::vector<int32_t> references;

  /// Guarded by the cache's mutex: a copy given back after it ran, for the next hit to rebind,
  /// and whether the cache has dropped this entry (a copy given back then is freed).
  mutable std::optional<PassContext> spare;
  mutable bool dropped = false;

  /// `context` (a copy of the result: a spare, or copy_of_result()) holding `recorded`'s
  /// buffers, values and lines.
  void bind(PassContext& context, const ir::Graph& recorded) const {
    const std::vector<ir::NodePtr>& copied = context.graph.nodes;
    for (const Binding& binding : bindings) {
      ir::Node& node = *copied[binding.result];
      const ir::Node& original = *recorded.nodes[binding.recorded];
      node.location = original.location;
      node.buffer = original.buffer;
      if (!binding.values) continue;
      node.params[0] = original.params[0];
      node.params[1] = original.params[1];
      node.seed = original.seed;
      if (original.has_attributes()) {
        ir::NodeAttributes& attributes = node.set_attributes();
        attributes.starts = original.starts();
        attributes.collective = original.collective();
      }
    }
  }

  /// Drops what bind gave a copy that has run, so that a spare holds no buffer; false when
  /// something outside the copy still holds one of its nodes (a queued collective), which a
  /// later bind must not change.
  bool unbind(PassContext& context) const {
    const std::vector<ir::NodePtr>& copied = context.graph.nodes;
    if (copied.size() != references.size()) return false;
    for (size_t i = 0; i < copied.size(); ++i) {
      if (copied[i].use_count() != references[i]) return false;
    }
    for (const Binding& binding : bindings) copied[binding.result]->buffer.reset();
    return true;
  }

  /// A copy of the result, unbound. The fusion plan has its kernels; fusion's reasons for the
  /// boundaries are for dumps, which bypass the cache.
  PassContext copy_of_result() const {
    ir::Graph copy;
    copy.nodes.reserve(nodes.size());
    for (size_t j = 0; j < nodes.size(); ++j) {
      ir::NodePtr node = ir::copy_without_inputs(*nodes[j]);
      node->inputs.reserve(inputs[j].size());
      for (int32_t position : inputs[j]) node->inputs.push_back(copy.nodes[position]);
      copy.nodes.push_back(std::move(node));
    }
    copy.outputs.reserve(outputs.size());
    for (int32_t position : outputs) copy.outputs.push_back(copy.nodes[position]);
    PassContext context(std::move(copy), options);
    const std::vector<ir::NodePtr>& copied = context.graph.nodes;
    if (!fused) return context;
    const auto pointers = [&](const std::vector<int32_t>& positions) {
      std::vector<ir::NodePtr> result;
      result.reserve(positions.size());
      for (int32_t position : positions) result.push_back(copied[position]);
      return result;
    };
    auto plan = std::make_unique<plan::FusionPlan>();
    plan->kernels.reserve(kernels.size());
    for (const KernelNodes& kernel : kernels) {
      plan->kernels.push_back({kernel.id, pointers(kernel.nodes), pointers(kernel.inputs),
                               pointers(kernel.outputs), kernel.description, kernel.epilogue});
    }
    context.fusion = std::move(plan);
    return context;
  }

  /// What to remember of `optimized`, the result of the passes over `clones`, the recorded
  /// graph's nodes as they were before the passes (`recorded`: their values then, in the same
  /// order); null when the result cannot be rebound.
  static std::shared_ptr<Entry> of(const std::vector<RecordedValues>& recorded,
                                   const std::vector<ir::NodePtr>& clones,
                                   const std::vector<int32_t>& folded_positions,
                                   const PassContext& optimized) {
    if (optimized.schedule) return nullptr;
    std::unordered_map<const ir::Node*, int32_t> recorded_position;
    recorded_position.reserve(clones.size());
    for (size_t i = 0; i < clones.size(); ++i) {
      recorded_position.emplace(clones[i].get(), static_cast<int32_t>(i));
    }
    auto entry = std::make_shared<Entry>();
    const std::vector<ir::NodePtr>& nodes = optimized.graph.nodes;
    for (size_t j = 0; j < nodes.size(); ++j) {
      const ir::Node& node = *nodes[j];
      const auto found = recorded_position.find(&node);
      if (found == recorded_position.end()) {
        if (node.is_evaluated()) return nullptr;  // a buffer from nowhere: not rebindable
        entry->folded = entry->folded || carries_values(node);
        continue;
      }
      const bool unchanged = recorded[found->second].unchanged_in(node);
      if (carries_values(node) && !unchanged) entry->folded = true;
      entry->bindings.push_back(
          {static_cast<int32_t>(j), found->second, carries_values(node) && unchanged});
    }
    if (entry->folded) {
      entry->folded_positions = folded_positions;
      for (int32_t position : folded_positions) {
        const ir::ScalarParam* params = recorded[position].params;
        entry->folded_from.insert(entry->folded_from.end(), {params[0], params[1]});
      }
    }

    const auto optimized_index = optimized.graph.index();
    const auto positions = [&](std::span<const ir::NodePtr> kernel_nodes) {
      std::vector<int32_t> result;
      result.reserve(kernel_nodes.size());
      for (const ir::NodePtr& node : kernel_nodes) {
        result.push_back(static_cast<int32_t>(optimized_index.at(node.get())));
      }
      return result;
    };
    if (optimized.fusion) {
      entry->fused = true;
      for (const plan::Kernel& kernel : optimized.fusion->kernels) {
        entry->kernels.push_back({.id = kernel.id,
                                  .nodes = positions(kernel.nodes),
                                  .inputs = positions(kernel.inputs),
                                  .outputs = positions(kernel.outputs),
                                  .epilogue = kernel.epilogue});
      }
    }
    entry->options = optimized.options;
    // Copies without buffers: the cache keeps no tensor alive.
    for (const ir::NodePtr& node : nodes) {
      entry->nodes.push_back(ir::copy_without_inputs(*node));
      entry->inputs.push_back(positions(node->inputs));
    }
    entry->outputs = positions(optimized.graph.outputs);
    entry->references.assign(entry->nodes.size(), 1);
    const auto count = [&](const std::vector<int32_t>& positions) {
      for (int32_t position : positions) ++entry->references[position];
    };
    for (const std::vector<int32_t>& node_inputs : entry->inputs) count(node_inputs);
    count(entry->outputs);
    for (const KernelNodes& kernel : entry->kernels) {
      count(kernel.nodes);
      count(kernel.inputs);
      count(kernel.outputs);
    }
    return entry;
  }
};

PlanCache::PlanCache(size_t capacity, size_t node_capacity)
    : capacity_(capacity), node_capacity_(node_capacity) {}
PlanCache::~PlanCache() = default;

PlanCache::Lookup::Lookup() = default;
PlanCache::Lookup::~Lookup() = default;
PlanCache::Lookup::Lookup(Lookup&&) noexcept = default;
PlanCache::Lookup& PlanCache::Lookup::operator=(Lookup&&) noexcept = default;

PlanCache::Lookup PlanCache::look_up(const ir::Graph& graph, const ir::Wiring& wiring,
                                     const std::string& pipeline,
                                     const PassOptions& options) const {
  Lookup lookup;
  lookup.signature_ = graph_signature(graph, wiring, options);
  lookup.hash_ = signature_hash(lookup.signature_);
  lookup.pipeline_ = pipeline;
  lookup.options_ = options;
  {
    std::lock_guard lock(mutex_);
    const auto [begin, end] = entries_.equal_range(lookup.hash_);
    for (auto it = begin; it != end; ++it) {
      const Entry& entry = *it->second;
      if (entry.signature != lookup.signature_ || entry.pipeline != pipeline) continue;
      if (entry.folded && entry.folded_from != params_at(graph.nodes, entry.folded_positions)) {
        continue;
      }
      lookup.entry_ = it->second;
      if (entry.spare) {
        lookup.hit_ = std::move(*entry.spare);
        entry.spare.reset();
        spare_nodes_ -= entry.nodes.size();
      }
      break;
    }
  }
  if (lookup.entry_) {
    if (!lookup.hit_) lookup.hit_ = lookup.entry_->copy_of_result();
    lookup.entry_->bind(*lookup.hit_, graph);
    return lookup;
  }
  lookup.copy_ = ir::clone_graph(graph);
  return lookup;
}

PlanCache::Lookup PlanCache::uncached(const ir::Graph& graph, const PassOptions& options) {
  Lookup lookup;
  lookup.options_ = options;
  lookup.copy_ = ir::clone_graph(graph);
  lookup.remembered_ = false;
  return lookup;
}

PassContext PlanCache::complete(Lookup lookup, const Pipeline& run) {
  if (lookup.hit_) return std::move(*lookup.hit_);
  PassContext context(std::move(lookup.copy_), lookup.options_);
  if (!lookup.remembered_) {
    run(context);
    return context;
  }
  const std::vector<ir::NodePtr> clones = context.graph.nodes;  // held: no address is reused
  std::vector<RecordedValues> recorded;
  recorded.reserve(clones.size());
  std::vector<std::vector<ir::Node*>> recorded_inputs;
  recorded_inputs.reserve(clones.size());
  for (const ir::NodePtr& clone : clones) {
    recorded.emplace_back(*clone);
    std::vector<ir::Node*>& inputs = recorded_inputs.emplace_back();
    for (const ir::NodePtr& input : clone->inputs) inputs.push_back(input.get());
  }
  run(context);
  std::shared_ptr<Entry> entry = Entry::of(
      recorded, clones, folding_sources(clones, recorded, recorded_inputs, context), context);
  if (!entry) return context;
  entry->signature = std::move(lookup.signature_);
  entry->pipeline = std::move(lookup.pipeline_);
  if (entry->nodes.size() > node_capacity_) return context;
  std::vector<std::shared_ptr<Entry>> dropped;  // freed after the lock, with their spares
  std::lock_guard lock(mutex_);
  const Entry* remembered = entry.get();
  nodes_ += entry->nodes.size();
  entries_.emplace(lookup.hash_, std::move(entry));
  age_.emplace_back(lookup.hash_, remembered);
  while (age_.size() > capacity_ || nodes_ > node_capacity_) {
    const auto [oldest_hash, oldest] = age_.front();
    age_.pop_front();
    const auto [first, last] = entries_.equal_range(oldest_hash);
    for (auto it = first; it != last; ++it) {
      if (it->second.get() == oldest) {
        nodes_ -= oldest->nodes.size();
        drop(*it->second);
        dropped.push_back(std::move(it->second));
        entries_.erase(it);
        break;
      }
    }
  }
  return context;
}

void PlanCache::drop(const Entry& entry) {
  entry.dropped = true;
  if (entry.spare) spare_nodes_ -= entry.nodes.size();
}

void PlanCache::give_back(Origin origin, PassContext context) {
  const std::shared_ptr<const Entry>& entry = origin.entry_;
  if (!entry || !entry->unbind(context)) return;
  std::lock_guard lock(mutex_);
  if (entry->dropped || entry->spare || spare_nodes_ + entry->nodes.size() > node_capacity_ / 2) {
    return;  // the caller frees `context`, after the lock is released
  }
  spare_nodes_ += entry->nodes.size();
  entry->spare = std::move(context);
}

size_t PlanCache::size() const {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

size_t PlanCache::nodes() const {
  std::lock_guard lock(mutex_);
  return nodes_;
}

void PlanCache::clear() {
  decltype(entries_) dropped;  // freed after the lock, with their spares
  std::lock_guard lock(mutex_);
  for (const auto& [hash, entry] : entries_) drop(*entry);
  entries_.swap(dropped);
  age_.clear();
  nodes_ = 0;
}

}  // namespace lz::passes
