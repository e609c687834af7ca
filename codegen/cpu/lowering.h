// Lowering of one fused kernel (passes/fusion_plan.h) to LLVM IR.
//
// A kernel compiles to one or more phases, run in order. Each phase is a function
//
//   void <name>_phase<i>(void* const* buffers, const uint64_t* scalars, int64_t begin,
//                        int64_t end)
//
// over the positions [begin, end) of its range, so the runtime can split the range across
// threads. `buffers` holds the kernel's inputs, then its outputs (Kernel::inputs, then
// Kernel::outputs); `scalars` holds kernel_scalars() (codegen/cpu/kernel_signature.h).
//
// How a kernel is computed
// ------------------------
// Every node is computed element by element: emitting a node at an index emits its inputs at
// the indices it reads (broadcasting, transposes, slices, reshapes and concatenation are index
// arithmetic), so nothing between the kernel's inputs and outputs is stored.
// - A kernel without reductions loops over its root's elements. A flat kernel (is_flat) uses one
//   linear loop; otherwise the loop runs row by row, so the innermost dimension is the inner
//   loop's induction variable and contiguous reads vectorize.
// - A kernel with reductions loops over the kept positions (the reductions' results). For each
//   one it accumulates every reduction over the reduced axes (loop 1), then computes the
//   outputs shaped like the results, then, in a second loop over the reduced axes, the outputs
//   shaped like the reductions' input that read the results through a broadcast (x - mean).
// - An output that the main loop does not compute at its own positions (a value read through a
//   broadcast, say) gets a phase of its own over its elements.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "passes/fusion_plan.h"

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace lz::codegen {

struct Phase {
  std::string symbol;
  /// The phase runs over kernel.nodes[range_node]->size() positions.
  int range_node = 0;
  /// Elements computed per position (the reduced extent for a reduction loop), to size the
  /// chunks the runtime hands to threads.
  int64_t work_per_position = 1;
};

struct LoweredKernel {
  std::unique_ptr<llvm::Module> module;
  std::vector<Phase> phases;
};

/// Lowers `kernel` (is_compilable) into a new module of `context`; symbols start with `name`.
LoweredKernel lower_kernel(const passes::Kernel& kernel, bool flat, llvm::LLVMContext& context,
                           const std::string& name);

}  // namespace lz::codegen
