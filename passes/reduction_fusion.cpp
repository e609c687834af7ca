// The fusion rules for what a reduction's kernel takes after the reduction (the rules themselves
// are at the top of passes/fusion.cpp): each node of the kernel depending on it must be
// kept-shaped or its input broadcast back, and a reduction over leading axes of an input beyond
// the first-level cache takes nothing its loops would write column by column.
#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ir/op.h"
#include "passes/fusion_builder.h"

namespace lz::passes::detail {
namespace {

bool is_elementwise(const Node& node) {
  const OpKind kind = kind_of(node);
  return kind == OpKind::Unary || kind == OpKind::Binary || kind == OpKind::Ternary;
}

/// The shape without its size-1 axes: two shapes with the same squeeze hold the same elements in
/// the same order.
Shape squeeze(const Shape& shape) {
  Shape squeezed;
  for (int64_t extent : shape) {
    if (extent != 1) squeezed.push_back(extent);
  }
  return squeezed;
}

/// `shape` as numpy broadcasting aligns it against `rank` axes: size-1 axes added in front.
Shape aligned(const Shape& shape, size_t rank) {
  if (shape.size() >= rank) return shape;
  Shape padded(rank - shape.size(), 1);
  padded.insert(padded.end(), shape.begin(), shape.end());
  return padded;
}

/// Whether a reduction keeps its input's last axis (a column sum) over an input larger than a
/// core's first-level cache (16,384 float32): its kernel's loops then run down the columns, and a
/// value shaped like its input would be written a strided element at a time, each to a line that
/// has left the cache, many times slower than by a kernel of its own. Below that size the lines
/// stay in cache and fusing saves a launch.
bool writes_columns_out_of_cache(const ReductionSignature& reduction) {
  constexpr int64_t kCachedElements = 16384;
  return !reduction.axes.empty() &&
         reduction.axes.back() != static_cast<int64_t>(reduction.domain.size()) - 1 &&
         shape_size(reduction.domain) >= kCachedElements;
}
bool writes_columns_out_of_cache(const Node& reduction) {
  return writes_columns_out_of_cache(signature_of(reduction));
}

std::string name_of(int position) { return "%" + std::to_string(position); }

}  // namespace

// Whether the node, shaped like the input of kernel `target`'s reduction, would be written out
// (asked for, or read by another kernel) by it while that reduction writes columns out of cache
// (the relu mask of a gradient, whose column sums are the bias's gradient).
bool FusionBuilder::written_column_by_column(int position, int target) const {
  const Group& group = groups_[target];
  if (!group.reduction || !writes_columns_out_of_cache(*group.reduction) ||
      node(position).shape != group.reduction->domain) {
    return false;
  }
  if (is_graph_output_[position]) return true;
  const std::span<const int> consumers = consumers_of(position);
  return std::any_of(consumers.begin(), consumers.end(),
                     [&](int consumer) { return group_of_[consumer] != target; });
}

// Checks that every node of kernel `target` depending on the reduction at `position` is a valid
// epilogue (see the top of the file). Those nodes are all reachable through the kernel's own
// edges, since kernels never form a cycle. Returns "" when they all are.
std::string FusionBuilder::epilogue_problem(int position, int target) {
  const Node& reduction = node(position);
  const Shape& domain = reduction.inputs[0]->shape;
  Shape kept_with_ones = domain;
  for (int64_t axis : reduction.axes()) kept_with_ones[axis] = 1;
  const Shape kept = squeeze(kept_with_ones);

  ++walk_;
  std::vector<int> dependents;
  std::vector<int> stack;
  const auto visit_consumers = [&](int from) {
    for (int consumer : consumers_of(from)) {
      if (group_of_[consumer] == target && walk_stamp_[consumer] != walk_) {
        walk_stamp_[consumer] = walk_;
        stack.push_back(consumer);
      }
    }
  };
  visit_consumers(position);
  while (!stack.empty()) {
    const int current = stack.back();
    stack.pop_back();
    dependents.push_back(current);
    visit_consumers(current);
  }
  std::sort(dependents.begin(), dependents.end());

  for (int dependent : dependents) {
    const Node& epilogue = node(dependent);
    if (is_reduction(epilogue)) {  // a later stage, over the same signature (checked above)
      stage_[dependent] = Stage::Kept;
      continue;
    }
    bool kept_inputs_only = true;
    bool broadcast_correctly = true;
    bool same_shape_inputs = true;
    for (int input : input_positions_[dependent]) {
      const bool depends = input == position || walk_stamp_[input] == walk_;
      if (!depends) continue;
      const Shape& shape = node(input).shape;
      const bool kept_input = input == position || stage_[input] == Stage::Kept;
      kept_inputs_only = kept_inputs_only && kept_input;
      same_shape_inputs = same_shape_inputs && shape == epilogue.shape;
      if (kept_input && aligned(shape, domain.size()) != kept_with_ones) {
        broadcast_correctly = false;
      }
    }
    const bool kept_shape = squeeze(epilogue.shape) == kept;
    const bool kept_op =
        (is_elementwise(epilogue) && same_shape_inputs) || epilogue.op == Op::Reshape;
    const bool broadcast_op = is_elementwise(epilogue) || epilogue.op == Op::BroadcastTo;
    if (kept_shape && kept_op && kept_inputs_only) {
      stage_[dependent] = Stage::Kept;
    } else if (epilogue.shape == domain && broadcast_op && broadcast_correctly) {
      if (writes_columns_out_of_cache(reduction)) {
        return "epilogue " + name_of(dependent) +
               " is shaped like the input of a reduction over leading axes, whose loops would "
               "write it column by column";
      }
      stage_[dependent] = Stage::BroadcastBack;
    } else {
      return "epilogue " + name_of(dependent) + " (" + std::string(ir::op_name(epilogue.op)) +
             ") is neither shaped like the reduction's result nor its input broadcast back";
    }
  }
  return "";
}

}  // namespace lz::passes::detail
