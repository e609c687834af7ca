// The running state of a reduction in generated CUDA code, and how states fold elements and
// combine across a warp, a block and the blocks of a grid.
//
// Per reduction r the state is acc<r> (the value; float64 for floating sums, as the interpreter
// accumulates), nan<r> (max/min/argmax/argmin of floats: a NaN was seen) and idx<r> (argmax/argmin:
// the index of the best element). Threads fold their elements in increasing order and states
// combine by index, so the first maximum and the first NaN win whatever order the states combine
// in.
#pragma once

#include <string>
#include <vector>

#include "codegen/cuda/source_writer.h"
#include "ir/node.h"

namespace lz::codegen::cuda {

struct ReductionState {
  const ir::Node* node = nullptr;
  DType dtype = float32;  // the reduction input's
  int number = 0;         // names the variables and the workspace slots
};

/// 64-bit workspace words per reduction state (value, NaN seen, index).
inline constexpr int kStateWords = 3;

bool tracks_index(const ReductionState& r);

/// Declares the state, holding the identity.
void declare_state(SourceWriter& out, const ReductionState& r);
/// Folds element `x`; `position` is its index along the reduced axis (argmax and argmin only).
void update_state(SourceWriter& out, const ReductionState& r, const std::string& x,
                  const std::string& position);
/// Folds the state whose variables carry `other` as a prefix (other_acc0, ...).
void combine_state(SourceWriter& out, const ReductionState& r, const char* other);
/// The reduction's result from its final state, in the reduction's dtype.
std::string result_expression(const ReductionState& r);

/// The shared arrays combine_block needs, at the top of the entry.
void declare_shared_state(SourceWriter& out, const std::vector<ReductionState>& reductions);
/// Combines the states of every thread of the block (warp shuffles, then shared memory across
/// warps); every thread ends with the block's state. Every thread of the block must reach it, and
/// blockDim.x must be a multiple of 32.
void combine_block(SourceWriter& out, const std::vector<ReductionState>& reductions);

/// Stores the state in `workspace` from word `base` + kStateWords * number: the value (float64
/// bits for floats, sign-extended integers, 0 or 1 for bools), NaN seen, index.
void write_state(SourceWriter& out, const ReductionState& r, const std::string& base);
/// Declares the state stored by write_state at `base`, its variables prefixed with `prefix`.
void read_state(SourceWriter& out, const ReductionState& r, const std::string& base,
                const char* prefix);

}  // namespace lz::codegen::cuda
