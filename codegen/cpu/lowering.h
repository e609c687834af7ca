// Lowering of one fused kernel (plan/fusion_plan.h) to LLVM IR.
//
// A kernel compiles to one or more phases, run in order. Each phase is a function
//
//   void <name>_phase<i>(void* const* buffers, const uint64_t* scalars, int64_t begin,
//                        int64_t end, uint64_t* state)
//
// over the positions [begin, end) of its range, so the runtime can split the range across
// threads. `buffers` holds the kernel's inputs, then its outputs (Kernel::inputs, then
// Kernel::outputs); `scalars` holds plan::kernel_scalars() (plan/kernel_signature.h); `state`
// is used only by the two phases of a split reduction (below).
//
// How a kernel is computed
// ------------------------
// Every node is computed element by element: emitting a node at an index emits its inputs at
// the indices it reads (broadcasting, transposes, slices, reshapes and concatenation are index
// arithmetic, codegen/value_emitter.h), so nothing between the kernel's inputs and outputs is
// stored. Which loops a kernel has, and which outputs each writes, is plan/kernel_layout.h's.
// - A kernel without reductions loops over its root's elements. A flat kernel (is_flat) uses one
//   linear loop; otherwise the loop runs row by row, so the innermost dimension is the inner
//   loop's induction variable and contiguous reads vectorize.
// - A kernel with reductions loops over the kept positions (the reductions' results). For each
//   one it accumulates every reduction over the reduced axes (loop 1), then computes the
//   outputs shaped like the results, then, in a second loop over the reduced axes, the outputs
//   shaped like the reductions' input that read the results through a broadcast (x - mean).
//   A loop-2 output that reads a reduction's input (softmax: e / sum(e)) finds that input stored
//   in its own buffer by loop 1 instead of computing it again.
// - A reduction over the leading axes (a column sum) that writes only result-shaped outputs
//   computes up to 1,024 kept positions side by side instead: their accumulators in an array,
//   each reduced row read as one contiguous run, so no loop walks down a column.
// - A reduction to a single value over many elements (sum(x)) is split instead: a Partial phase
//   accumulates each thread's chunk of the reduced elements into a state (two 64-bit slots per
//   reduction: value, NaN seen), the runtime combines the states in chunk order, and a Finish
//   phase computes the outputs from the combined state (results at position 0, loop-2 outputs
//   over its chunk).
// - An output that the main loop does not compute at its own positions (a value read through a
//   broadcast, say) gets a phase of its own over its elements.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/op.h"
#include "lazuli/dtype.h"
#include "plan/fusion_plan.h"
#include "plan/kernel_layout.h"

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace lz::codegen {

/// One function of a compiled kernel. It holds no size: the code serves every kernel of its key,
/// whose sizes may differ (plan::Sizes), so the runtime derives the ranges from the kernel run.
struct Phase {
  enum class Kind { Loop, Partial, Finish };
  /// What the positions are: the elements of kernel.nodes[range_node], the reduced elements of
  /// that node (a reduction: the chunks of a split reduction), or a single position.
  enum class Range { Elements, ReducedElements, One };
  Kind kind = Kind::Loop;
  std::string symbol;
  int range_node = 0;
  Range range = Range::Elements;
  /// Loops over range_node's reduced elements that each position runs (0: one element's work),
  /// to size the chunks the runtime hands to threads.
  int reduced_loops = 0;
  /// Partial: each reduction's op and input dtype, in state order, to combine the states.
  std::vector<std::pair<ir::Op, DType>> reductions;
};

/// The positions `phase` runs over for `kernel`.
inline int64_t phase_positions(const Phase& phase, const plan::Kernel& kernel) {
  const ir::Node& node = *kernel.nodes[phase.range_node];
  switch (phase.range) {
    case Phase::Range::Elements: return node.size();
    case Phase::Range::ReducedElements: return plan::reduced_elements(node);
    case Phase::Range::One: return 1;
  }
  return 0;
}

/// The elements each position of `phase` computes for `kernel`.
inline int64_t phase_work_per_position(const Phase& phase, const plan::Kernel& kernel) {
  if (phase.reduced_loops == 0) return 1;
  return plan::reduced_elements(*kernel.nodes[phase.range_node]) * phase.reduced_loops;
}

/// How the runtime combines two states of a Partial phase: `into` (earlier elements) absorbs
/// `from` (later ones), slot pairs as the lowering writes them.
void combine_reduction_states(const std::vector<std::pair<ir::Op, DType>>& reductions,
                              uint64_t* into, const uint64_t* from);

/// The function attribute of a phase whose aligned vector stores the JIT makes non-temporal, once
/// the vectorizer has made them (plan::cpu_streams_outputs).
inline constexpr const char* kStreamingStoresAttribute = "lz-streaming-stores";

struct LoweredKernel {
  std::unique_ptr<llvm::Module> module;
  std::vector<Phase> phases;
};

/// Lowers `kernel` (is_compilable), holding its sizes as `sizes` says and writing outputs over
/// inputs as `written_over` says, into a new module of `context`; symbols start with `name`.
LoweredKernel lower_kernel(const plan::Kernel& kernel, plan::Sizes sizes,
                           const plan::WrittenOver& written_over, llvm::LLVMContext& context,
                           const std::string& name);

}  // namespace lz::codegen
