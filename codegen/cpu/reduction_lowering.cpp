// The reduction phases of the CPU lowering (codegen/cpu/kernel_emitter.h): accumulators, the
// loop nests per stage, column tiles, and the Partial and Finish phases of a split reduction (how
// each runs, at the top of codegen/cpu/lowering.h).
#include "codegen/cpu/kernel_emitter.h"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <vector>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include "codegen/cpu/element_ops.h"
#include "plan/kernel_layout.h"
#include "plan/kernel_signature.h"
#include "plan/unsupported_kernel.h"

namespace lz::codegen::detail {
namespace {

/// argmax and argmin: their result is a position along the reduced axis, not a value.
bool is_index_reduction(const Node& reduction) {
  return reduction.op == Op::Argmax || reduction.op == Op::Argmin;
}

/// The most kept positions a column reduction computes side by side (emit_column_tiles): each
/// row of its input then gives a contiguous, vectorizable run of up to this many elements (4 KiB
/// of float32), and the accumulators (8 KiB of float64) stay in the first-level cache.
constexpr int64_t kColumnTile = 1024;

}  // namespace

// ---------------------------------------------------------------------------------------
// Reduction phases

AccumulatorStart KernelEmitter::accumulator_start(const Node* reduction) {
  const DType dtype = reduction->inputs[0]->dtype;
  llvm::Type* type = value_type(context_, dtype);
  switch (reduction->op) {
    case Op::Sum:
      // Floating sums accumulate in float64, as the interpreter does.
      if (is_floating(dtype)) {
        return {builder_.getDoubleTy(), llvm::ConstantFP::get(builder_.getDoubleTy(), 0.0)};
      }
      return {type, llvm::ConstantInt::get(type, 0)};
    case Op::Max:
    case Op::Min:
    case Op::Argmax:
    case Op::Argmin: {
      const bool lowest = reduction->op == Op::Max || reduction->op == Op::Argmax;
      Value* identity = nullptr;
      if (is_floating(dtype)) {
        identity = llvm::ConstantFP::getInfinity(type, lowest);
      } else if (dtype == bool_) {
        identity = builder_.getInt1(!lowest);
      } else {
        const unsigned bits = type->getIntegerBitWidth();
        identity = llvm::ConstantInt::get(context_, lowest ? llvm::APInt::getSignedMinValue(bits)
                                                           : llvm::APInt::getSignedMaxValue(bits));
      }
      return {type, identity, true, is_index_reduction(*reduction)};
    }
    default: break;
  }
  throw plan::UnsupportedKernel(std::string(ir::op_name(reduction->op)) + " reduction");
}

Accumulator KernelEmitter::start_accumulator(const Node* reduction) {
  const AccumulatorStart start = accumulator_start(reduction);
  Accumulator accumulator;
  accumulator.type = start.type;
  accumulator.value = local(start.type, start.identity);
  if (start.flag) accumulator.flag = local(builder_.getInt1Ty(), builder_.getFalse());
  if (start.index) accumulator.index = local(builder_.getInt64Ty(), constant(0));
  return accumulator;
}

void KernelEmitter::update_accumulator(const Node* reduction, const Accumulator& accumulator,
                                       Value* x, const std::vector<Value*>& dims) {
  const DType dtype = reduction->inputs[0]->dtype;
  llvm::Type* type = accumulator.type;
  Value* current = builder_.CreateLoad(type, accumulator.value);
  Value* next = nullptr;
  if (reduction->op == Op::Sum) {
    if (is_floating(dtype)) {
      Value* wide = dtype == float32 ? builder_.CreateFPExt(x, builder_.getDoubleTy()) : x;
      // Reassociation lets the loop keep vector partial sums (a different, equally valid
      // summation order than the interpreter's).
      llvm::FastMathFlags flags;
      flags.setAllowReassoc();
      next = builder_.CreateFAdd(current, wide);
      llvm::cast<llvm::Instruction>(next)->setFastMathFlags(flags);
    } else {
      next = builder_.CreateAdd(current, x);
    }
    builder_.CreateStore(next, accumulator.value);
    return;
  }
  Value* seen_nan = builder_.CreateLoad(builder_.getInt1Ty(), accumulator.flag);
  Value* x_nan = is_floating(dtype) ? builder_.CreateFCmpUNO(x, x) : builder_.getFalse();
  if (is_index_reduction(*reduction)) {
    // The first maximum (minimum) wins; the first NaN counts as either.
    const bool maximum = reduction->op == Op::Argmax;
    Value* better =
        is_floating(dtype)
            ? (maximum ? builder_.CreateFCmpOGT(x, current) : builder_.CreateFCmpOLT(x, current))
        : dtype == bool_
            ? (maximum ? builder_.CreateICmpUGT(x, current) : builder_.CreateICmpULT(x, current))
            : (maximum ? builder_.CreateICmpSGT(x, current) : builder_.CreateICmpSLT(x, current));
    Value* take =
        builder_.CreateAnd(builder_.CreateNot(seen_nan), builder_.CreateOr(x_nan, better));
    Value* best_index = builder_.CreateLoad(builder_.getInt64Ty(), accumulator.index);
    builder_.CreateStore(builder_.CreateSelect(take, dims[reduction->axes()[0]], best_index),
                         accumulator.index);
    builder_.CreateStore(builder_.CreateSelect(take, x, current), accumulator.value);
    builder_.CreateStore(builder_.CreateOr(seen_nan, x_nan), accumulator.flag);
    return;
  }
  const bool maximum = reduction->op == Op::Max;
  if (is_floating(dtype)) {
    // Whether a NaN was seen is tracked apart, so the running extremum may assume there are
    // none (no-NaNs flags let the loop vectorize): after a NaN it is poison, but then the
    // flag selects NaN as the result and the poison is never read.
    next = builder_.CreateIntrinsic(maximum ? llvm::Intrinsic::maxnum : llvm::Intrinsic::minnum,
                                    {type}, {current, x});
    llvm::FastMathFlags flags;
    flags.setNoNaNs();
    flags.setNoSignedZeros();
    llvm::cast<llvm::Instruction>(next)->setFastMathFlags(flags);
    builder_.CreateStore(builder_.CreateOr(seen_nan, x_nan), accumulator.flag);
  } else if (dtype == bool_) {
    next = maximum ? builder_.CreateOr(current, x) : builder_.CreateAnd(current, x);
  } else {
    Value* pick = maximum ? builder_.CreateICmpSGT(x, current) : builder_.CreateICmpSLT(x, current);
    next = builder_.CreateSelect(pick, x, current);
  }
  builder_.CreateStore(next, accumulator.value);
}

Value* KernelEmitter::finish_accumulator(const Node* reduction, const Accumulator& accumulator) {
  const DType dtype = reduction->inputs[0]->dtype;
  llvm::Type* type = accumulator.type;
  Value* value = builder_.CreateLoad(type, accumulator.value);
  switch (reduction->op) {
    case Op::Sum:
      return dtype == float32 ? builder_.CreateFPTrunc(value, builder_.getFloatTy()) : value;
    case Op::Argmax:
    case Op::Argmin: return builder_.CreateLoad(builder_.getInt64Ty(), accumulator.index);
    default:
      if (!is_floating(dtype)) return value;
      return builder_.CreateSelect(builder_.CreateLoad(builder_.getInt1Ty(), accumulator.flag),
                                   llvm::ConstantFP::getNaN(type), value);
  }
}

/// The state slots of reduction `r`: its value (float64 bits for floats, sign-extended
/// integers, 0 or 1 for bools) and whether a NaN was seen.
Value* KernelEmitter::state_slot(size_t r, int slot) {
  return builder_.CreateConstInBoundsGEP1_64(builder_.getInt64Ty(), state_, 2 * r + slot);
}

/// A reduction of a whole tensor split over threads: each reduces its chunk into state slots
/// (the partial phase), the runtime combines the slots, and the finish phase reads the results.
void KernelEmitter::emit_split_reduction(const std::vector<const Node*>& reductions,
                                         const plan::ReductionLoops& loops) {
  emit_partial_phase(reductions, loops);
  emit_finish_phase(reductions, loops);
}

/// Each thread's chunk reduced into its state slots; the first loop's outputs stored on the way.
void KernelEmitter::emit_partial_phase(const std::vector<const Node*>& reductions,
                                       const plan::ReductionLoops& loops) {
  begin_phase(reductions.front(), Phase::Range::ReducedElements, 0, Phase::Kind::Partial);
  for (const Node* reduction : reductions) {
    phases_.back().reductions.emplace_back(reduction->op, reduction->inputs[0]->dtype);
  }
  std::vector<Accumulator> accumulators;
  for (const Node* reduction : reductions) accumulators.push_back(start_accumulator(reduction));
  emit_loop(
      begin_, end_,
      [&](Value* r) {
        memo_.clear();
        Index index{&loops.input_shape, {}, r};
        for (size_t j = 0; j < reductions.size(); ++j) {
          update_accumulator(reductions[j], accumulators[j], input_value(*reductions[j], 0, index),
                             {});
        }
        for (const Node* output : loops.in_first_loop) store(output, emit_value(output, index), r);
        memo_.clear();
      },
      /*interleave=*/true);
  for (size_t j = 0; j < reductions.size(); ++j) {
    store_state(j, reductions[j]->inputs[0]->dtype, accumulators[j]);
  }
  end_phase();
}

/// Reduction j's accumulator written to its state slots (state_slot).
void KernelEmitter::store_state(size_t j, DType dtype, const Accumulator& accumulator) {
  llvm::Type* i64 = builder_.getInt64Ty();
  Value* value = builder_.CreateLoad(accumulator.type, accumulator.value);
  if (is_floating(dtype)) {
    if (!value->getType()->isDoubleTy())
      value = builder_.CreateFPExt(value, builder_.getDoubleTy());
    value = builder_.CreateBitCast(value, i64);
  } else if (dtype == bool_) {
    value = builder_.CreateZExt(value, i64);
  } else {
    value = builder_.CreateSExtOrTrunc(value, i64);
  }
  builder_.CreateStore(value, state_slot(j, 0));
  Value* seen_nan = builder_.getFalse();
  if (accumulator.flag) seen_nan = builder_.CreateLoad(builder_.getInt1Ty(), accumulator.flag);
  builder_.CreateStore(builder_.CreateZExt(seen_nan, i64), state_slot(j, 1));
}

/// The result of reduction j (`reduction`), read from its combined state slots.
Value* KernelEmitter::load_state(size_t j, const Node& reduction) {
  llvm::Type* i64 = builder_.getInt64Ty();
  const DType dtype = reduction.inputs[0]->dtype;
  Value* bits = builder_.CreateLoad(i64, state_slot(j, 0));
  if (!is_floating(dtype)) return builder_.CreateTrunc(bits, value_type(context_, dtype));
  Value* value = builder_.CreateBitCast(bits, builder_.getDoubleTy());
  if (dtype == float32) value = builder_.CreateFPTrunc(value, builder_.getFloatTy());
  if (reduction.op == Op::Sum) return value;
  Value* seen_nan = builder_.CreateICmpNE(builder_.CreateLoad(i64, state_slot(j, 1)), constant(0));
  return builder_.CreateSelect(seen_nan, llvm::ConstantFP::getNaN(value->getType()), value);
}

/// The results, from the combined state: the first thread stores the outputs at the kept
/// index, and each thread runs the final loop's outputs over its chunk.
void KernelEmitter::emit_finish_phase(const std::vector<const Node*>& reductions,
                                      const plan::ReductionLoops& loops) {
  const std::vector<const Node*>& in_final_loop = loops.in_final_loop;
  begin_phase(reductions.front(),
              in_final_loop.empty() ? Phase::Range::One : Phase::Range::ReducedElements, 0,
              Phase::Kind::Finish);
  for (size_t j = 0; j < reductions.size(); ++j) {
    reduction_values_[reductions[j]] = load_state(j, *reductions[j]);
  }
  llvm::BasicBlock* results = llvm::BasicBlock::Create(context_, "results", function_);
  llvm::BasicBlock* rest = llvm::BasicBlock::Create(context_, "rest", function_);
  builder_.CreateCondBr(builder_.CreateICmpEQ(begin_, constant(0)), results, rest);
  builder_.SetInsertPoint(results);
  memo_.clear();
  for (const Node* output : loops.at_kept) {
    Index index{&output->shape, {}, constant(0)};
    store(output, emit_value(output, index), constant(0));
  }
  memo_.clear();
  builder_.CreateBr(rest);
  builder_.SetInsertPoint(rest);
  if (!in_final_loop.empty()) {
    emit_loop(begin_, end_, [&](Value* r) {
      memo_.clear();
      Index index{&loops.input_shape, {}, r};
      for (const Node* output : in_final_loop) store(output, emit_value(output, index), r);
      memo_.clear();
    });
  }
  reduction_values_.clear();
  end_phase();
}

/// The stashes each stage's loop writes.
std::vector<std::vector<KernelEmitter::Stash>> KernelEmitter::stashes_by_stage(
    const plan::ReductionLoops& loops) const {
  const std::vector<std::vector<const Node*>>& stages = loops.stages;
  std::vector<std::vector<Stash>> stashed(stages.size());
  for (const Node* output : loops.in_final_loop) {
    bool found = false;
    // The last stage first: its input is the nearest to the output (softmax's e, not the x
    // that max reads), so the final loop recomputes the least.
    for (size_t s = stages.size(); s-- > 0 && !found;) {
      for (const Node* reduction : stages[s]) {
        const Node* input = reduction->inputs[0].get();
        if (layout_.position.contains(input) && input->dtype == output->dtype &&
            reads(output, input)) {
          stashed[s].push_back({output, input});
          found = true;
          break;
        }
      }
    }
  }
  return stashed;
}

/// For each kept position: a loop nest over the reduced elements per stage, the kept-shaped
/// outputs, then the final nest (kernel_layout.h).
void KernelEmitter::emit_reduction_phase(const plan::ReductionLoops& loops) {
  const std::vector<std::vector<const Node*>>& stages = loops.stages;
  const bool has_index = std::any_of(stages.front().begin(), stages.front().end(),
                                     [](const Node* r) { return is_index_reduction(*r); });
  // plan::kernel_key holds this choice for kernels of runtime sizes.
  if (plan::cpu_splits_across_threads(*stages.front().front()) && !has_index) {
    if (stages.size() > 1) {
      throw plan::UnsupportedKernel("reductions to one value that read each other's results");
    }
    emit_split_reduction(stages.front(), loops);
    return;
  }

  const std::vector<std::vector<Stash>> stashed = stashes_by_stage(loops);
  const int nests = static_cast<int>(stages.size()) + (loops.in_final_loop.empty() ? 0 : 1);
  begin_phase(stages.front().front(), Phase::Range::Elements, nests);
  if (reduces_leading_axes(loops)) {
    emit_column_tiles(loops);
    end_phase();
    return;
  }
  emit_loop(begin_, end_, [&](Value* k) {
    const std::vector<Value*> fixed = kept_dimensions(loops, k);
    for (size_t s = 0; s < stages.size(); ++s) emit_stage_nest(loops, s, stashed[s], fixed);
    store_kept_outputs(loops, k);
    if (!loops.in_final_loop.empty()) emit_final_nest(loops, stashed, fixed);
    reduction_values_.clear();
  });
  end_phase();
}

/// The kept-shaped outputs at kept position k, once the reductions' results there are known.
void KernelEmitter::store_kept_outputs(const plan::ReductionLoops& loops, Value* k) {
  for (const Node* output : loops.at_kept) {
    Index index{&output->shape, {}, k};
    store(output, emit_value(output, index), k);
  }
  memo_.clear();
}

/// Whether the loops reduce the leading axes of their input (a column sum: bias gradients,
/// means over a batch) in one stage of sums, maxima or minima that writes only kept-shaped
/// outputs. Consecutive kept positions are then consecutive elements of every reduced row,
/// which emit_column_tiles reads a run at a time instead of one column after another.
bool KernelEmitter::reduces_leading_axes(const plan::ReductionLoops& loops) const {
  if (loops.stages.size() != 1 || !loops.in_first_loop.empty() || !loops.in_final_loop.empty() ||
      loops.axes.size() >= loops.input_shape.size()) {
    return false;
  }
  for (size_t a = 0; a < loops.axes.size(); ++a) {
    if (loops.axes[a] != static_cast<int64_t>(a)) return false;
  }
  return std::none_of(loops.stages.front().begin(), loops.stages.front().end(),
                      [](const Node* r) { return is_index_reduction(*r); });
}

/// The phase's kept positions in tiles of up to kColumnTile: per tile, an array of
/// accumulators per reduction, a loop over the reduced rows whose inner loop adds a contiguous
/// run of the row into them (vectorized), then the tile's outputs.
void KernelEmitter::emit_column_tiles(const plan::ReductionLoops& loops) {
  const std::vector<const Node*>& reductions = loops.stages.front();
  Extent kept_extent, reduced_extent;
  for (size_t d = 0; d < loops.input_shape.size(); ++d) {
    Extent& part = d < loops.axes.size() ? reduced_extent : kept_extent;
    part = product(part, extent(loops.input_shape[d]));
  }
  Value* kept = extent_value(kept_extent);
  Value* reduced = extent_value(reduced_extent);

  struct TileArrays {
    AccumulatorStart start;
    llvm::AllocaInst* values;
    llvm::AllocaInst* flags;  // null without a NaN flag
  };
  std::vector<TileArrays> arrays;
  {
    llvm::IRBuilder<> at_entry(entry_, entry_->begin());
    for (const Node* reduction : reductions) {
      const AccumulatorStart start = accumulator_start(reduction);
      llvm::AllocaInst* flags =
          start.flag ? at_entry.CreateAlloca(builder_.getInt1Ty(), constant(kColumnTile)) : nullptr;
      arrays.push_back({start, at_entry.CreateAlloca(start.type, constant(kColumnTile)), flags});
    }
  }
  const auto slot = [&](const TileArrays& tile, Value* j) {
    Accumulator accumulator;
    accumulator.type = tile.start.type;
    accumulator.value = builder_.CreateInBoundsGEP(tile.start.type, tile.values, j);
    if (tile.flags != nullptr) {
      accumulator.flag = builder_.CreateInBoundsGEP(builder_.getInt1Ty(), tile.flags, j);
    }
    return accumulator;
  };

  Value* tiles = builder_.CreateUDiv(
      builder_.CreateAdd(builder_.CreateSub(end_, begin_), constant(kColumnTile - 1)),
      constant(kColumnTile));
  emit_loop(constant(0), tiles, [&](Value* t) {
    Value* first = builder_.CreateAdd(begin_, builder_.CreateMul(t, constant(kColumnTile)));
    Value* left = builder_.CreateSub(end_, first);
    Value* width = builder_.CreateSelect(builder_.CreateICmpSLT(left, constant(kColumnTile)), left,
                                         constant(kColumnTile));
    emit_loop(constant(0), width, [&](Value* j) {
      for (const TileArrays& tile : arrays) {
        const Accumulator accumulator = slot(tile, j);
        builder_.CreateStore(tile.start.identity, accumulator.value);
        if (accumulator.flag) builder_.CreateStore(builder_.getFalse(), accumulator.flag);
      }
    });
    emit_loop(constant(0), reduced, [&](Value* r) {
      Value* row_start = builder_.CreateAdd(builder_.CreateMul(r, kept), first);
      emit_loop(constant(0), width, [&](Value* j) {
        memo_.clear();
        Index index{&loops.input_shape, {}, builder_.CreateAdd(row_start, j)};
        for (size_t i = 0; i < reductions.size(); ++i) {
          update_accumulator(reductions[i], slot(arrays[i], j),
                             input_value(*reductions[i], 0, index), {});
        }
        memo_.clear();
      });
    });
    emit_loop(constant(0), width, [&](Value* j) {
      for (size_t i = 0; i < reductions.size(); ++i) {
        reduction_values_[reductions[i]] = finish_accumulator(reductions[i], slot(arrays[i], j));
      }
      store_kept_outputs(loops, builder_.CreateAdd(first, j));
      reduction_values_.clear();
    });
  });
}

/// The index of the input at kept position k: one value per input dimension, the kept
/// dimensions' indices and nullptr for the reduced ones (which emit_nest loops over).
std::vector<Value*> KernelEmitter::kept_dimensions(const plan::ReductionLoops& loops, Value* k) {
  Index kept_index{&loops.kept_shape, {}, k};
  const std::vector<Value*> kept_dims = dims_of(kept_index);
  std::vector<Value*> fixed(loops.input_shape.size(), nullptr);
  for (size_t d = 0, next = 0; d < loops.input_shape.size(); ++d) {
    if (std::find(loops.axes.begin(), loops.axes.end(), int64_t(d)) == loops.axes.end()) {
      fixed[d] = kept_dims[next++];
    }
  }
  return fixed;
}

/// Stage s's nest over the reduced elements: its reductions accumulate, the first stage stores
/// the first loop's outputs, and the stage's stashes are written; the results are then known.
void KernelEmitter::emit_stage_nest(const plan::ReductionLoops& loops, size_t s,
                                    const std::vector<Stash>& stashes,
                                    const std::vector<Value*>& fixed) {
  const std::vector<const Node*>& reductions = loops.stages[s];
  std::vector<Accumulator> accumulators;
  for (const Node* reduction : reductions) accumulators.push_back(start_accumulator(reduction));
  emit_nest(
      loops.input_shape, loops.axes, fixed,
      [&](const std::vector<Value*>& dims) {
        memo_.clear();
        Index index{&loops.input_shape, dims, nullptr};
        // A stash stores a reduction's input: the value the reduction accumulates.
        std::unordered_map<const Node*, Value*> inputs;
        for (size_t r = 0; r < reductions.size(); ++r) {
          Value* x = input_value(*reductions[r], 0, index);
          inputs.emplace(reductions[r]->inputs[0].get(), x);
          update_accumulator(reductions[r], accumulators[r], x, dims);
        }
        if (s == 0) {
          for (const Node* output : loops.in_first_loop) {
            store(output, emit_value(output, index), linear_of(index));
          }
        }
        for (const Stash& stash : stashes) {
          store(stash.output, inputs.at(stash.input), linear_of(index));
        }
        memo_.clear();
      },
      /*accumulating=*/true);
  for (size_t r = 0; r < reductions.size(); ++r) {
    reduction_values_[reductions[r]] = finish_accumulator(reductions[r], accumulators[r]);
  }
}

/// The final nest: the final loop's outputs, reading each stashed value back instead of
/// computing it again.
void KernelEmitter::emit_final_nest(const plan::ReductionLoops& loops,
                                    const std::vector<std::vector<Stash>>& stashed,
                                    const std::vector<Value*>& fixed) {
  emit_nest(
      loops.input_shape, loops.axes, fixed,
      [&](const std::vector<Value*>& dims) {
        memo_.clear();
        Index index{&loops.input_shape, dims, nullptr};
        for (const std::vector<Stash>& stage_stashes : stashed) {
          for (const Stash& stash : stage_stashes) {
            llvm::Type* type = storage_type(context_, stash.output->dtype);
            Value* address =
                builder_.CreateInBoundsGEP(type, output_pointer(stash.output), linear_of(index));
            Value* stored = builder_.CreateAlignedLoad(
                type, address, llvm::Align(dtype_size(stash.output->dtype)));
            remember(stash.input, index, from_storage(builder_, stash.output->dtype, stored));
          }
        }
        for (const Node* output : loops.in_final_loop) {
          store(output, emit_value(output, index), linear_of(index));
        }
        memo_.clear();
      },
      /*accumulating=*/false);
}

}  // namespace lz::codegen::detail
