// How a fused kernel's nodes are laid out for code generation, the same for every backend: each
// node's position and first scalar slot, which nodes depend on a reduction, the reduction loops
// and which loop writes each output.
//
// The plan both generators follow (codegen/cpu/lowering.cpp and reduction_lowering.cpp,
// codegen/cuda/source.cpp and reduction_entries.cpp): a kernel without a reduction is one
// elementwise loop over its last node's positions, which writes the outputs of that shape (every
// output in a flat kernel). A kernel with reductions runs, for each kept position, one loop over
// the reduced elements per reduction stage (a stage's reductions read the results of earlier stages
// only through broadcasts, as softmax's sum of exp(x - max) reads the max), then writes the outputs
// shaped like the results, then one more loop over the reduced elements for the outputs shaped like
// the reduced input that read a result (softmax's e / sum). An output none of these computes gets
// an elementwise loop of its own, which it can only have when it does not depend on a reduction.
#pragma once

#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/node.h"
#include "plan/fusion_plan.h"
#include "plan/kernel_signature.h"

namespace lz::plan {

/// The elements `reduction` reduces into each of its results: its input's extents along its axes.
int64_t reduced_elements(const ir::Node& reduction);

/// The results of `reduction`: its input's extents along the other axes.
int64_t kept_elements(const ir::Node& reduction);

/// Whether the CPU code generator splits `reduction`, a reduction to one value over 65,536
/// elements or more, across threads (a Partial phase per thread, then a Finish phase), where
/// its kernel allows (no argmax or argmin).
bool cpu_splits_across_threads(const ir::Node& reduction);

/// Whether the CPU code generator writes `kernel`'s outputs with non-temporal (streaming)
/// stores: a flat kernel whose outputs together take at least cpu_streaming_threshold_bytes().
/// Outputs that large would only pass through the caches on their way to memory, evicting what
/// is there, and an ordinary store reads each line before writing it (for ownership): a fifth
/// more traffic for a kernel that reads three inputs.
bool cpu_streams_outputs(const Kernel& kernel);

/// The bytes of output from which a flat kernel streams them: the last-level cache's size
/// (sysconf; 32 MiB where the system does not say), at most 16 MiB.
int64_t cpu_streaming_threshold_bytes();

/// Overrides cpu_streaming_threshold_bytes() (tests, which stream small outputs); a negative
/// value restores the default. The kernel key holds the choice, so a kernel keyed before keeps
/// its choice: compiled code, and a plan-cache entry's remembered key.
void set_cpu_streaming_threshold_bytes(int64_t bytes);

/// The loops of a kernel with reductions, all over the same input shape and axes.
struct ReductionLoops {
  Shape input_shape;
  std::vector<int64_t> axes;
  Shape kept_shape;     // the input shape without the reduced axes
  Shape reduced_shape;  // the reduced axes' extents
  int64_t kept = 0;     // elements of kept_shape
  int64_t reduced = 0;  // elements of reduced_shape
  /// The reductions by stage, in node order within a stage: stage s reads results of stages
  /// before s only.
  std::vector<std::vector<const ir::Node*>> stages;
  /// Input-shaped outputs that read no result: written by the first stage's loop.
  std::vector<const ir::Node*> in_first_loop;
  /// Results and values shaped like them: written once per kept position after the last stage.
  std::vector<const ir::Node*> at_kept;
  /// Input-shaped outputs that read a result: written by the loop after the last stage.
  std::vector<const ir::Node*> in_final_loop;
};

/// A loop over the positions of `range` that writes `outputs`, each at its own position.
struct ElementwiseLoop {
  const ir::Node* range = nullptr;
  std::vector<const ir::Node*> outputs;
};

struct KernelLayout {
  /// The layout of `kernel` for code that holds its sizes as `sizes` says (kernel_signature.h).
  KernelLayout(const Kernel& kernel, Sizes sizes);

  /// Index of each node in kernel.nodes.
  std::unordered_map<const ir::Node*, int> position;
  /// Each node's first slot in kernel_scalars(kernel, sizes) (kernel_signature.h).
  std::unordered_map<const ir::Node*, int> scalar_slot;
  /// Sizes::Runtime: the slot in kernel_scalars(kernel, sizes) of each runtime extent, by value.
  std::unordered_map<int64_t, int> runtime_extent_slot;
  /// Slots of kernel_scalars(kernel, sizes).
  int scalar_count = 0;
  /// Reductions, and the nodes computed from one.
  std::unordered_set<const ir::Node*> depends_on_reduction;
  /// The reduction loops; empty for an elementwise kernel.
  std::optional<ReductionLoops> reduction;
  /// The elementwise loops, run after the reduction loops: for an elementwise kernel the main
  /// loop first, then one per output of another shape. Throws UnsupportedKernel
  /// (unsupported_kernel.h) when such an output depends on a reduction.
  std::vector<ElementwiseLoop> elementwise_loops;
  /// Sizes::Flat: one linear loop, outputs read at its position.
  bool flat = false;

 private:
  void add_separate_loop(const ir::Node* output);
};

}  // namespace lz::plan
