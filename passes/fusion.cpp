// The "fuse" pass: groups the graph's nodes into kernels and says why each edge between two
// kernels was not fused.
//
// How nodes are grouped
// ---------------------
// The graph is walked once backwards, consumers before producers. A node joins the kernel of its
// consumers when they all sit in one kernel and the rules below allow it; otherwise it starts a
// kernel of its own and is written out. So producers are fused into consumers, every member of a
// kernel is an ancestor of the kernel's last node (its root), and each value is computed once.
//
// - Data leaves (and any node already holding a buffer) are in no kernel; kernels read them.
// - Elementwise ops, movement ops (reshape, transpose, slice, concatenate, broadcast_to, gather)
//   and leaf generators (full, arange, random_*) fuse into their consumers. Inside a kernel a
//   movement or a broadcast is index arithmetic (a gather's, computed from its index operand's
//   value) and a 0-d full is a parameter: nothing is copied.
// - matmul runs alone (an external BLAS call): it fuses into nothing, so its elementwise epilogue
//   (bias, relu) forms one kernel after it (which the runtime then runs on each block of the
//   product's rows, passes/matmul_epilogues.h), and nothing fuses into it but a transpose of an
//   operand's last two axes that only it reads and nobody asked for (h^T in a gradient h^T @ g):
//   the library reads that operand's buffer transposed instead of a copy (plan::matmul_operand).
// - A collective (all_sum, all_gather, ...) runs alone too, through the communicator: nothing
//   fuses into it or it into anything.
// - A reduction fuses into its consumer's kernel, and its elementwise producers fuse into it. A
//   kernel holding a reduction runs, for each element of the reduction's result (a kept index),
//   a loop over the reduced axes (the prologue: the nodes feeding the reduction), then the
//   epilogue: the nodes that depend on the reduction's result. Each epilogue node must be
//     * kept-shaped: its elements line up one to one with the reduction's result (the result
//       shape with or without the reduced size-1 axes), computed by an elementwise op or a
//       reshape between those forms, e.g. `mean = sum / n`; or
//     * broadcast back: it has the reduction's input shape and reads kept-shaped values only
//       through a broadcast over the reduced axes, e.g. `x - mean`, `e / sum(e)`. It runs in a
//       second loop over the reduced axes of the same kept index, so the broadcast stays index
//       arithmetic; a prologue value it reads again (`e` in softmax) is kept for that loop,
//       not recomputed.
//   Anything else (a transpose of the result, a shape that is neither) ends the kernel at the
//   reduction, which is then written out. A reduction that keeps the last axis (a column sum) of
//   an input beyond the first-level cache takes no producer that must be written out and no
//   broadcast-back epilogue: its loops would write them column by column.
// - Reductions over the same input shape and axes share a kernel, side by side or chained: a
//   reduction whose result feeds another one through broadcast-back nodes (softmax's max feeds
//   the sum of exp(x - max)) runs in an earlier stage, a loop over the reduced elements of the
//   same kept index before the later reduction's loop; the reduced element is read again there,
//   from cache, never written out. The later reduction counts as a kept-shaped epilogue of the
//   earlier one. Reductions to one value do not chain (their kernel splits the reduced elements
//   across threads, one stage at a time), and reductions over different axes or shapes never
//   share a kernel.
//
//   Softmax over the last axis is therefore 1 kernel: {max, x - max, exp, sum, e / sum}, in two
//   stages (max; sum) and a final loop (the divide, a broadcast-back epilogue of the sum). A
//   layer norm is 1 kernel too: the mean's sum, then the variance's sum of the centred squares,
//   then the normalized output; no full-size intermediate is written out.
// - A node read by several kernels joins the one whose root comes first in graph order, provided
//   that root precedes every node of the other kernels (so none of those can feed the chosen one
//   and no cycle appears), and is written out for the others; otherwise it gets a kernel of its
//   own. A graph output inside a kernel is written out too (Kernel::outputs), never recomputed.
// - Bounds: joining is refused when the kernel already has options.max_kernel_ops nodes or would
//   then read more than options.max_kernel_inputs values from outside. A node is never split, so
//   one node with more inputs than the bound is a kernel of its own over the bound.
// - Flat kernels (one loop over their elements) of the same element count then merge into one
//   where the earlier one's place allows (passes/flat_kernel_merging.h): a gradient's cotangents
//   are such siblings, computed from the same values.
// - options.fusion == false (LZ_FUSION=0): one kernel per node.
//
// Kernels are ordered by their roots' positions. That respects dependencies: a value crossing
// kernels is either a root, which precedes its readers, or a shared node placed by the rule above.
// Then each collective moves up to just after the kernels it reads (passes/collective_hoisting.h),
// so that communication overlaps the kernels after it. Last, each matmul takes the kernel that
// computes from its product row by row as its epilogue (passes/matmul_epilogues.h), run on the
// product's rows in cache.
//
// Cost: one backward walk over consumer lists, plus, when a reduction joins a kernel, a walk over
// the part of that kernel depending on it (bounded by max_kernel_ops). No recursion.
//
// The checks of a reduction's epilogue (the rule above) are in passes/reduction_fusion.cpp.

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "ir/op.h"
#include "lazuli/error.h"
#include "passes/collective_hoisting.h"
#include "passes/flat_kernel_merging.h"
#include "passes/fusion_builder.h"
#include "passes/matmul_epilogues.h"
#include "passes/pass.h"
#include "plan/fusion_plan.h"
#include "plan/kernel_layout.h"

namespace lz::passes {
namespace detail {
namespace {

/// A matmul (a BLAS call) and a collective (a communicator call) each make a kernel of their own.
bool runs_alone(const Node& node) { return node.op == Op::MatMul || ir::is_collective(node.op); }

/// Why such a node is a kernel boundary, for the fusion report.
std::string alone_name(const Node& node) {
  return node.op == Op::MatMul ? "a matmul, which runs as its own kernel"
                               : "a collective, which runs alone through the communicator";
}

/// Values kernels read rather than compute.
bool is_input_leaf(const Node& node) { return node.op == Op::Data || node.is_evaluated(); }

/// Why two reductions cannot share a kernel.
std::string different_reduction_text(const ReductionSignature& a, const ReductionSignature& b) {
  return a.domain == b.domain ? "over a different axis" : "over a different shape";
}

}  // namespace

plan::FusionPlan FusionBuilder::build() {
  index_graph();
  const int count = static_cast<int>(graph_.nodes.size());
  group_of_.assign(count, -1);
  feeds_reduction_.assign(count, false);
  walk_stamp_.assign(count, 0);
  stage_.assign(count, Stage::Kept);
  for (int position = count - 1; position >= 0; --position) {
    if (!is_input_leaf(node(position))) place(position);
  }
  return make_plan();
}

// Positions of every node's inputs and its consumer lists (each consumer once per producer).
void FusionBuilder::index_graph() {
  const auto positions = graph_.index();
  const int count = static_cast<int>(graph_.nodes.size());
  input_positions_.resize(count);
  std::vector<int> consumer_count(count, 0);
  for (int position = 0; position < count; ++position) {
    if (graph_.nodes[position] == nullptr) {
      throw Error("[fuse] node %" + std::to_string(position) + " of the graph is null");
    }
    const Node& consumer = node(position);
    if (is_input_leaf(consumer)) continue;
    for (const ir::NodePtr& input : consumer.inputs) {
      const auto found = positions.find(input.get());
      if (found == positions.end()) {
        throw Error("[fuse] an input of node %" + std::to_string(position) +
                    " is not in the graph; a graph lists every node before its consumers");
      }
      const int producer = static_cast<int>(found->second);
      if (producer >= position) {
        throw Error("[fuse] node %" + std::to_string(position) + " reads %" +
                    std::to_string(producer) +
                    ", which does not come before it; a graph lists inputs before consumers");
      }
      auto& inputs = input_positions_[position];
      if (std::find(inputs.begin(), inputs.end(), producer) != inputs.end()) continue;
      inputs.push_back(producer);
      ++consumer_count[producer];
    }
  }
  is_graph_output_.assign(count, false);
  for (const ir::NodePtr& output : graph_.outputs) {
    const auto found = positions.find(output.get());
    if (found == positions.end()) throw Error("[fuse] a graph output is not among its nodes");
    is_graph_output_[found->second] = true;
  }
  consumer_offsets_.assign(count + 1, 0);
  for (int position = 0; position < count; ++position) {
    consumer_offsets_[position + 1] = consumer_offsets_[position] + consumer_count[position];
  }
  consumers_.resize(consumer_offsets_[count]);
  std::vector<int> next(consumer_offsets_.begin(), consumer_offsets_.end() - 1);
  for (int position = 0; position < count; ++position) {
    for (int producer : input_positions_[position]) consumers_[next[producer]++] = position;
  }
}

// Decides the kernel of the node at `position`; its consumers are all placed already.
void FusionBuilder::place(int position) {
  const std::span<const int> consumers = consumers_of(position);
  if (!options_.fusion) {
    start_group(position);
    for (int consumer : consumers) refuse(position, consumer, "fusion is off");
    return;
  }
  if (consumers.empty()) {
    start_group(position);
    return;
  }

  // The consumers' kernels; the candidate is the one whose root comes first.
  std::vector<int> groups;
  for (int consumer : consumers) {
    const int group = group_of_[consumer];
    if (group_stamp_[group] == position) continue;
    group_stamp_[group] = position;
    groups.push_back(group);
  }
  const int target = *std::min_element(groups.begin(), groups.end(), [&](int a, int b) {
    return groups_[a].root < groups_[b].root;
  });

  std::string reason = reason_not_to_join(position, target);
  if (reason.empty() && groups.size() > 1) {
    for (int group : groups) {
      if (group != target && groups_[target].root > groups_[group].first) {
        reason = "producer is read by several kernels that depend on each other";
      }
    }
  }
  if (reason.empty()) {
    join(position, target);
  } else {
    start_group(position);
  }
  for (int consumer : consumers) {
    const int group = group_of_[consumer];
    if (group == group_of_[position]) continue;
    refuse(position, consumer, group == target ? reason : shared_reason(position, consumer));
  }
}

// Why the node may not join kernel `target`, which holds some of its consumers; "" if it may.
std::string FusionBuilder::reason_not_to_join(int position, int target) {
  const Node& producer = node(position);
  const Group& group = groups_[target];
  if (runs_alone(producer)) return "producer is " + alone_name(producer);
  if (group.sealed) {
    if (is_transposed_operand(position, group)) return "";
    if (ir::is_collective(node(group.root).op)) {
      return "consumer is " + alone_name(node(group.root));
    }
    const std::vector<int>& operands = input_positions_[group.root];
    return std::find(operands.begin(), operands.end(), position) != operands.end()
               ? "consumer is a matmul, which runs as its own kernel"
               : "consumer is a matmul's transposed operand, which it reads from memory";
  }
  if (group.size >= options_.max_kernel_ops) {
    return "kernel reached " + std::to_string(options_.max_kernel_ops) + " ops";
  }
  if (inputs_after_join(position, group) > static_cast<size_t>(options_.max_kernel_inputs)) {
    return "kernel reached " + std::to_string(options_.max_kernel_inputs) + " inputs";
  }
  if (written_column_by_column(position, target)) {
    return "producer is written out, and its consumer's reduction over leading axes would "
           "write it column by column";
  }
  if (!is_reduction(producer)) return "";

  const ReductionSignature signature = signature_of(producer);
  for (int consumer : consumers_of(position)) {
    if (group_of_[consumer] != target) continue;
    if (is_reduction(node(consumer))) {
      const ReductionSignature other = signature_of(node(consumer));
      if (other == signature) return "consumer reduces this reduction's result again";
      return "consumer is a reduction " + different_reduction_text(signature, other);
    }
    if (feeds_reduction_[consumer]) {
      if (group.reduction && !(*group.reduction == signature)) {
        return "consumer feeds a reduction " +
               different_reduction_text(signature, *group.reduction);
      }
      if (plan::kept_elements(producer) == 1) {
        return "consumer feeds another reduction of its kernel; reductions to one value do "
               "not chain in a kernel";
      }
    }
  }
  if (group.reduction && !(*group.reduction == signature)) {
    return "consumer's kernel reduces " + different_reduction_text(signature, *group.reduction);
  }
  return epilogue_problem(position, target);
}

// The kernel's input count once the node has joined: it stops being an input and its own
// inputs (none of them placed yet) become ones.
size_t FusionBuilder::inputs_after_join(int position, const Group& group) const {
  const bool was_input =
      std::find(group.inputs.begin(), group.inputs.end(), position) != group.inputs.end();
  size_t count = group.inputs.size() - (was_input ? 1 : 0);
  for (int input : input_positions_[position]) {
    if (std::find(group.inputs.begin(), group.inputs.end(), input) == group.inputs.end()) {
      ++count;
    }
  }
  return count;
}

// Whether the node is a transpose of the last two axes that only `group`'s matmul reads, as
// an operand, and that is no graph output: the matmul reads its input transposed.
bool FusionBuilder::is_transposed_operand(int position, const Group& group) const {
  if (node(group.root).op != Op::MatMul || !plan::swaps_last_two_axes(node(position)) ||
      is_graph_output_[position]) {
    return false;
  }
  const std::span<const int> consumers = consumers_of(position);
  return std::all_of(consumers.begin(), consumers.end(),
                     [&](int consumer) { return consumer == group.root; });
}

// Why an edge to a kernel the node did not join (it joined another or none) crosses kernels.
std::string FusionBuilder::shared_reason(int position, int consumer) const {
  const Node& reader = node(consumer);
  if (runs_alone(node(position))) return "producer is " + alone_name(node(position));
  if (runs_alone(reader)) return "consumer is " + alone_name(reader);
  if (groups_[group_of_[consumer]].sealed) {
    return "consumer is a matmul's transposed operand, which it reads from memory";
  }
  const Group& home = groups_[group_of_[position]];
  if (is_reduction(reader) && home.reduction && !(*home.reduction == signature_of(reader))) {
    return "consumer is a reduction " +
           different_reduction_text(signature_of(reader), *home.reduction);
  }
  return "producer is read by several kernels; the one computing it writes it out";
}

void FusionBuilder::start_group(int position) {
  const Node& root = node(position);
  Group group;
  group.root = position;
  group.first = position;
  group.size = 1;
  group.sealed = runs_alone(root);
  if (is_reduction(root)) group.reduction = signature_of(root);
  group.inputs = input_positions_[position];
  group_of_[position] = static_cast<int>(groups_.size());
  groups_.push_back(std::move(group));
  group_stamp_.push_back(-1);
}

void FusionBuilder::join(int position, int target) {
  Group& group = groups_[target];
  group_of_[position] = target;
  group.first = position;
  ++group.size;
  if (is_reduction(node(position)) && !group.reduction) {
    group.reduction = signature_of(node(position));
  }
  std::erase(group.inputs, position);
  for (int input : input_positions_[position]) {
    if (std::find(group.inputs.begin(), group.inputs.end(), input) == group.inputs.end()) {
      group.inputs.push_back(input);
    }
  }
  for (int consumer : consumers_of(position)) {
    if (group_of_[consumer] == target &&
        (is_reduction(node(consumer)) || feeds_reduction_[consumer])) {
      feeds_reduction_[position] = true;
    }
  }
}

void FusionBuilder::refuse(int producer, int consumer, std::string reason) {
  refusals_.push_back({producer, consumer, std::move(reason)});
}

plan::FusionPlan FusionBuilder::make_plan() const {
  const int count = static_cast<int>(graph_.nodes.size());
  plan::FusionPlan plan;
  std::vector<int> kernel_of_group(groups_.size(), -1);
  for (int position = 0; position < count; ++position) {
    const int group = group_of_[position];
    if (group >= 0 && groups_[group].root == position) {
      kernel_of_group[group] = static_cast<int>(plan.kernels.size());
      plan.kernels.emplace_back().id = kernel_of_group[group];
    }
  }

  std::vector<std::vector<int>> members(plan.kernels.size());
  for (int position = 0; position < count; ++position) {
    if (group_of_[position] >= 0) members[kernel_of_group[group_of_[position]]].push_back(position);
  }
  std::vector<int> input_stamp(count, -1);
  std::vector<int> inputs;
  for (plan::Kernel& kernel : plan.kernels) {
    inputs.clear();
    for (int position : members[kernel.id]) {
      const int group = group_of_[position];
      kernel.nodes.push_back(graph_.nodes[position]);
      for (int input : input_positions_[position]) {
        if (group_of_[input] == group || input_stamp[input] == kernel.id) continue;
        input_stamp[input] = kernel.id;
        inputs.push_back(input);
      }
      bool written_out = is_graph_output_[position];
      for (int consumer : consumers_of(position)) {
        written_out = written_out || group_of_[consumer] != group;
      }
      if (written_out) kernel.outputs.push_back(graph_.nodes[position]);
    }
    std::sort(inputs.begin(), inputs.end());
    for (int input : inputs) kernel.inputs.push_back(graph_.nodes[input]);
  }

  std::vector<const Refusal*> refusals;
  refusals.reserve(refusals_.size());
  for (const Refusal& refusal : refusals_) refusals.push_back(&refusal);
  std::sort(refusals.begin(), refusals.end(), [](const Refusal* a, const Refusal* b) {
    return std::pair(a->producer, a->consumer) < std::pair(b->producer, b->consumer);
  });
  plan.refusals.reserve(refusals.size());
  for (const Refusal* refusal : refusals) {
    plan.refusals.push_back(
        {graph_.nodes[refusal->producer], graph_.nodes[refusal->consumer], refusal->reason});
  }
  return plan;
}

}  // namespace detail
namespace {

class Fusion final : public Pass {
 public:
  std::string_view name() const override { return "fuse"; }
  void run(PassContext& context) override {
    context.fusion = std::make_unique<plan::FusionPlan>(
        detail::FusionBuilder(context.graph, context.options).build());
    if (context.options.fusion) {
      merge_flat_kernels(*context.fusion, context.graph, context.options);
    }
    hoist_collectives(*context.fusion);
    if (context.options.fusion) attach_matmul_epilogues(*context.fusion);
  }
};

}  // namespace

std::unique_ptr<Pass> make_fusion() { return std::make_unique<Fusion>(); }

}  // namespace lz::passes
