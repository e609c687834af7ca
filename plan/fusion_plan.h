// What fusion decides: which nodes compute together in one kernel, and why others do not.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/node.h"

namespace lz::plan {

struct KernelDescription;  // plan/kernel_signature.h

/// A group of nodes computed by one kernel launch.
struct Kernel {
  int id = 0;
  /// Nodes computed inside, inputs before consumers (a subsequence of the graph's order).
  std::vector<ir::NodePtr> nodes;
  /// Values the kernel reads from outside: data leaves and other kernels' outputs.
  std::vector<ir::NodePtr> inputs;
  /// Values the kernel writes out: those read by later kernels or asked for as graph outputs.
  /// Every other node of the kernel lives only inside it.
  std::vector<ir::NodePtr> outputs;
  /// Shared by the kernels of one structure (the plan cache's), so that what is derived from the
  /// structure (the keys of its code, ...) is derived once; null when the kernel is the only one
  /// of its kind.
  std::shared_ptr<KernelDescription> description;
  /// For a matmul kernel, the position in FusionPlan::kernels of its epilogue: a later kernel
  /// that computes from the product row by row and runs on each block of the product's rows as
  /// soon as it is computed (passes/matmul_epilogues.h); -1 when it has none.
  int epilogue = -1;
};

/// A producer -> consumer edge that fusion did not merge, and why ("consumer is a reduction over
/// a different axis"). Dumps print these next to the kernel boundary.
struct FusionRefusal {
  ir::NodePtr producer;
  ir::NodePtr consumer;
  std::string reason;
};

/// For each output of one run of a kernel, the position in Kernel::inputs of the input it is
/// written over (taking that input's memory, element by element), or -1; empty when every output
/// has memory of its own. The executor decides it run by run (runtime/kernel_executor.cpp), and
/// the kernel's code then stores such an output through the input's pointer.
using WrittenOver = std::vector<int>;

/// Whether `kernel` may write an output over `input` element by element: every node of the
/// kernel that depends on `input` is elementwise (or a reshape) over exactly input's elements,
/// so element i of the input is read only to compute element i, before it is overwritten.
/// A reduction, transpose, slice or matmul reading the input would see overwritten elements.
bool reads_index_aligned(const Kernel& kernel, const ir::Node& input);

struct FusionPlan {
  /// Kernels in an order where every kernel comes after those whose outputs it reads.
  std::vector<Kernel> kernels;
  std::vector<FusionRefusal> refusals;
};

/// Whether `node` is a transpose that swaps the last two axes and keeps the others: a matmul
/// reads such an operand from its input's buffer, as that buffer's matrices transposed.
bool swaps_last_two_axes(const ir::Node& node);

/// Whether `kernel` is a matmul (an external library call): its last node is the matmul, and any
/// other node is a transpose of an operand that swaps_last_two_axes and only the matmul reads.
bool is_matmul_kernel(const Kernel& kernel);

/// Whether `kernel` is a collective (all_sum, all_gather, ...): fusion gives each a kernel of
/// its own, which the communicator runs.
bool is_collective_kernel(const Kernel& kernel);

/// Operand `i` (0 or 1) of a matmul kernel's matmul as the library reads it: the position in
/// kernel.inputs of the value whose buffer holds it, and whether it holds the operand's
/// matrices transposed.
struct MatmulOperand {
  int input = 0;
  bool transposed = false;
};
MatmulOperand matmul_operand(const Kernel& kernel, int i);

/// The plan as text: each kernel with its nodes (ir/printer.h format, graph numbering), inputs
/// and outputs, and after it the refusals that end it (`# not fused: ...`).
std::string print_fusion_plan(const FusionPlan& plan, const ir::Graph& graph);

}  // namespace lz::plan
