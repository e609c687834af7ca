// The builder behind the "fuse" pass (passes/fusion.cpp, its rules at the top): the graph's nodes
// grouped into kernels in one backward walk. fusion.cpp defines the walk, the rules for joining a
// kernel and the plan made of the groups; reduction_fusion.cpp the rules for what a reduction's
// kernel takes after it (its epilogue).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/op.h"
#include "passes/pass.h"
#include "plan/fusion_plan.h"

namespace lz::passes::detail {

using ir::Node;
using ir::Op;
using ir::OpKind;

inline OpKind kind_of(const Node& node) { return ir::op_info(node.op).kind; }

inline bool is_reduction(const Node& node) { return kind_of(node) == OpKind::Reduction; }

/// What a reduction loops over: its input's shape and the reduced axes.
struct ReductionSignature {
  Shape domain;
  std::vector<int64_t> axes;
  friend bool operator==(const ReductionSignature&, const ReductionSignature&) = default;
};

inline ReductionSignature signature_of(const Node& reduction) {
  return {reduction.inputs[0]->shape, reduction.axes()};
}

struct Group {
  int root = 0;   // its last node in graph order; every other member is an ancestor of it
  int first = 0;  // its first node in graph order
  int size = 0;
  bool sealed = false;  // a matmul or a collective: runs alone
  std::optional<ReductionSignature> reduction;
  std::vector<int> inputs;  // positions of the values read from outside, no duplicates
};

class FusionBuilder {
 public:
  FusionBuilder(const ir::Graph& graph, const PassOptions& options)
      : graph_(graph), options_(options) {}

  plan::FusionPlan build();

 private:
  enum class Stage : uint8_t { Kept, BroadcastBack };

  struct Refusal {
    int producer = 0;
    int consumer = 0;
    std::string reason;
  };

  const Node& node(int position) const { return *graph_.nodes[position]; }

  std::span<const int> consumers_of(int position) const {
    return {consumers_.data() + consumer_offsets_[position],
            consumers_.data() + consumer_offsets_[position + 1]};
  }

  // The walk, joining a kernel, the plan (fusion.cpp)
  void index_graph();
  void place(int position);
  std::string reason_not_to_join(int position, int target);
  size_t inputs_after_join(int position, const Group& group) const;
  bool is_transposed_operand(int position, const Group& group) const;
  std::string shared_reason(int position, int consumer) const;
  void start_group(int position);
  void join(int position, int target);
  void refuse(int producer, int consumer, std::string reason);
  plan::FusionPlan make_plan() const;

  // What a reduction's kernel takes after it (reduction_fusion.cpp)
  bool written_column_by_column(int position, int target) const;
  std::string epilogue_problem(int position, int target);

  const ir::Graph& graph_;
  const PassOptions& options_;
  std::vector<std::vector<int>> input_positions_;  // per node, distinct
  std::vector<int> consumer_offsets_;              // consumers_of(i) = consumers_[offsets[i]..]
  std::vector<int> consumers_;
  std::vector<bool> is_graph_output_;  // asked for: written out by its kernel
  std::vector<int> group_of_;          // -1 for input leaves
  std::vector<bool> feeds_reduction_;  // an ancestor, inside its kernel, of a reduction there
  std::vector<int> walk_stamp_;        // for the epilogue walk
  std::vector<Stage> stage_;           // valid where walk_stamp_ == walk_
  int walk_ = 0;
  std::vector<Group> groups_;
  std::vector<int> group_stamp_;  // by group: the last node whose consumers listed it
  std::vector<Refusal> refusals_;
};

}  // namespace lz::passes::detail
