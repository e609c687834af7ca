// How a fused kernel's nodes are laid out for code generation, the same for every backend: each
// node's position and first scalar slot, which nodes depend on a reduction, and which outputs
// the main loop computes and which need a loop of their own.
//
// The plan both generators follow (cpu/lowering.cpp, cuda/source.cpp): a kernel without a
// reduction is one elementwise loop over its last node's positions; a kernel with reductions is
// one reduction loop (its outputs shaped like the result or, as softmax's, like the reduced
// input). An output neither loop computes gets an elementwise loop of its own, which it can
// only have when it does not depend on a reduction.
#pragma once

#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/node.h"
#include "passes/fusion_plan.h"

namespace lz::codegen {

struct KernelLayout {
  explicit KernelLayout(const passes::Kernel& kernel);

  /// Index of each node in kernel.nodes.
  std::unordered_map<const ir::Node*, int> position;
  /// Each node's first slot in kernel_scalars(kernel) (kernel_signature.h).
  std::unordered_map<const ir::Node*, int> scalar_slot;
  /// Slots of kernel_scalars(kernel).
  int scalar_count = 0;
  /// Reductions, and the nodes computed from one.
  std::unordered_set<const ir::Node*> depends_on_reduction;
  /// The kernel's reductions, in node order; empty for an elementwise kernel.
  std::vector<const ir::Node*> reductions;
  /// kernel.outputs, as plain pointers.
  std::vector<const ir::Node*> outputs;

  /// Checks that `output`, which the main loop did not compute, can have an elementwise loop
  /// of its own; throws UnsupportedKernel (unsupported_kernel.h) when it depends on a
  /// reduction.
  void check_separate_output(const ir::Node* output) const;
};

}  // namespace lz::codegen
