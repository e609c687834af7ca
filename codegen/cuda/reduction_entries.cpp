// The reduction entries of the CUDA source (codegen/cuda/source_emitter.h): a kept position per
// thread or per block, with rows staged in shared memory, and the Partial, Finish and Broadcast
// entries of a reduction to one value (the ABI, at the top of codegen/cuda/source.h).
#include "codegen/cuda/source_emitter.h"

#include <algorithm>
#include <string>
#include <unordered_set>
#include <vector>

#include "codegen/cuda/element_source.h"
#include "lazuli/error.h"
#include "plan/kernel_layout.h"
#include "plan/unsupported_kernel.h"

namespace lz::codegen::cuda::detail {
namespace {

/// Reduced elements from which a reduction to one value runs as per-block partial states and a
/// finishing block instead of one block.
constexpr int64_t kSplitReductionElements = 1 << 14;

/// Reduced elements up to which one thread computes a kept position alone: a block would leave
/// most of its threads idle.
constexpr int64_t kThreadPerPositionElements = 64;

/// Iterations of a block's loop over reduced elements unrolled together: 8 loads of 4 bytes in
/// flight per thread (64 KiB per multiprocessor at full occupancy) cover DRAM's latency.
constexpr int kBlockLoopUnroll = 8;

/// Shared memory a block may fill with the rows of its inputs that later passes over the reduced
/// elements read again (staged rows): 32 KiB leaves room for 7 blocks of 256 threads on an sm_90
/// multiprocessor (228 KiB).
constexpr int64_t kStagedRowBytes = 32 * 1024;

}  // namespace

// ---------------------------------------------------------------------------------------
// Reduction entries

/// The inputs a block-per-position kernel stages in shared memory: those the first stage
/// reads at the loop's position (through elementwise nodes of the input's shape, as softmax's
/// max reads x), while later passes read them again, as far as kStagedRowBytes allows. Each
/// thread reads back only what it stored itself, so staging needs no barrier.
void SourceEmitter::choose_staged_rows(const plan::ReductionLoops& loops, int passes) {
  if (passes < 2) return;
  std::vector<const Node*> pending;
  for (const Node* reduction : loops.stages.front()) pending.push_back(reduction->inputs[0].get());
  std::unordered_set<const Node*> seen;
  int64_t bytes = 0;
  while (!pending.empty()) {
    const Node* node = pending.back();
    pending.pop_back();
    if (node->shape != loops.input_shape || !seen.insert(node).second) continue;
    if (layout_.position.contains(node)) {
      const ir::OpKind kind = ir::op_info(node->op).kind;
      if (kind != ir::OpKind::Unary && kind != ir::OpKind::Binary && kind != ir::OpKind::Ternary) {
        continue;
      }
      for (const ir::NodePtr& input : node->inputs) pending.push_back(input.get());
      continue;
    }
    const int64_t row_bytes = loops.reduced * static_cast<int64_t>(dtype_size(node->dtype));
    if (bytes + row_bytes > kStagedRowBytes) continue;
    bytes += row_bytes;
    const std::string name = "row_" + buffer_name(node);
    writer_.line("__shared__ " + std::string(storage_type(node->dtype)) + " " + name + "[" +
                 std::to_string(loops.reduced) + "];");
    staged_rows_.emplace(node, name);
  }
}

/// Declares each reduction's result from its state and makes it the reduction's value.
void SourceEmitter::bind_results(const std::vector<ReductionState>& reductions) {
  for (const ReductionState& r : reductions) {
    reduction_values_[r.node] = declare(value_type(r.node->dtype), result_expression(r));
  }
}

void SourceEmitter::emit_reduction_entries(const plan::ReductionLoops& loops) {
  std::vector<std::vector<ReductionState>> stages;
  int number = 0;
  for (const std::vector<const Node*>& stage : loops.stages) {
    std::vector<ReductionState>& states = stages.emplace_back();
    for (const Node* node : stage) {
      if (node->op == Op::Sum && node->inputs[0]->dtype == bool_) {
        throw Error("[sum] the CUDA code generator has no bool form (input " +
                    shape_string(loops.input_shape) + ")");
      }
      states.push_back({node, node->inputs[0]->dtype, number++});
    }
  }
  if (loops.kept == 1 && loops.reduced >= kSplitReductionElements) {
    if (stages.size() > 1) {
      throw plan::UnsupportedKernel("reductions to one value that read each other's results");
    }
    emit_split_reduction(stages.front(), loops);
  } else {
    emit_reduction_per_position(stages, loops);
  }
}

/// The input index of reduced position `reduced_position` at the kept dims `kept_dims`.
SourceEmitter::Index SourceEmitter::input_index(const plan::ReductionLoops& loops,
                                                const std::vector<std::string>& kept_dims,
                                                const std::string& reduced_position) {
  Index reduced_index{&loops.reduced_shape, {}, reduced_position};
  const std::vector<std::string>& reduced_dims = dims_of(reduced_index);
  const Shape& input_shape = loops.input_shape;
  Index index{&input_shape, std::vector<std::string>(input_shape.size()), ""};
  for (size_t d = 0, kept_next = 0, reduced_next = 0; d < input_shape.size(); ++d) {
    const bool is_reduced =
        std::find(loops.axes.begin(), loops.axes.end(), int64_t(d)) != loops.axes.end();
    index.dims[d] = is_reduced ? reduced_dims[reduced_next++] : kept_dims[kept_next++];
  }
  return index;
}

/// Folds the reduced elements at `index` into the states and writes `outputs` there.
void SourceEmitter::accumulate_at(const std::vector<ReductionState>& reductions,
                                  const std::vector<const Node*>& outputs, Index& index) {
  for (const ReductionState& r : reductions) {
    const std::string x = input_value(*r.node, 0, index);
    update_state(writer_, r, x, tracks_index(r) ? dims_of(index)[r.node->axes()[0]] : "");
  }
  for (const Node* output : outputs) {
    const std::string value = emit_value(output, index);
    store(output, value, linear_of(index));
  }
}

/// One kept position per thread (few reduced elements) or per block, grid-stride: a loop over
/// the reduced elements per stage, then the kept-shaped outputs, then the final loop.
void SourceEmitter::emit_reduction_per_position(
    const std::vector<std::vector<ReductionState>>& stages, const plan::ReductionLoops& loops) {
  const bool by_block = loops.reduced > kThreadPerPositionElements;
  CudaEntry entry;
  entry.kind = CudaEntry::Kind::Reduction;
  entry.range_node = layout_.position.at(stages.front().front().node);
  entry.threads_per_position = by_block ? kCudaBlockSize : 1;
  begin_entry(entry, "reduce");
  if (by_block) {
    for (const std::vector<ReductionState>& stage : stages) declare_shared_state(writer_, stage);
    choose_staged_rows(loops,
                       static_cast<int>(stages.size()) + (loops.in_final_loop.empty() ? 0 : 1));
  }
  writer_.open(by_block ? "for (lz_i64 k = blockIdx.x; k < count; k += gridDim.x)"
                        : "for (lz_i64 k = lz_global_thread(); k < count; k += lz_grid_threads())");
  Index kept_index{&loops.kept_shape, {}, "k"};
  const std::vector<std::string> kept_dims = dims_of(kept_index);
  // A block's loop strides by the launch's constant block size and unrolls, so each thread
  // has several loads in flight: with one at a time a row reduction reached half the H200's
  // DRAM bandwidth.
  const std::string reduced_loop =
      by_block ? "for (lz_i64 r = threadIdx.x; r < " + literal(loops.reduced) +
                     "; r += " + std::to_string(kCudaBlockSize) + ")"
               : "for (lz_i64 r = 0; r < " + literal(loops.reduced) + "; ++r)";
  const auto open_reduced_loop = [&] {
    if (by_block) writer_.line("#pragma unroll " + std::to_string(kBlockLoopUnroll));
    writer_.open(reduced_loop);
  };
  for (size_t s = 0; s < stages.size(); ++s) {
    for (const ReductionState& r : stages[s]) declare_state(writer_, r);
    open_reduced_loop();
    {
      Block block(*this);
      Index index = input_index(loops, kept_dims, "r");
      loop_index_ = index;
      staging_ = s == 0 ? Staging::Store : Staging::Load;
      accumulate_at(stages[s], s == 0 ? loops.in_first_loop : std::vector<const Node*>{}, index);
      staging_ = Staging::Off;
    }
    writer_.close();
    if (by_block) combine_block(writer_, stages[s]);
    bind_results(stages[s]);
  }
  if (!loops.at_kept.empty()) {
    writer_.open(by_block ? "if (threadIdx.x == 0)" : "");
    Block block(*this);
    for (const Node* output : loops.at_kept) {
      Index index{&output->shape, {}, "k"};
      store(output, emit_value(output, index), "k");
    }
    writer_.close();
  }
  if (!loops.in_final_loop.empty()) {
    open_reduced_loop();
    Block block(*this);
    Index index = input_index(loops, kept_dims, "r");
    loop_index_ = index;
    staging_ = Staging::Load;
    for (const Node* output : loops.in_final_loop) {
      store(output, emit_value(output, index), linear_of(index));
    }
    staging_ = Staging::Off;
    writer_.close();
  }
  reduction_values_.clear();
  staged_rows_.clear();
  writer_.close();
  end_entry();
}

/// A reduction to one value: Partial (a state per block), Finish (one block combines them and
/// writes the results), Broadcast (the outputs reading the results over the input's shape).
void SourceEmitter::emit_split_reduction(const std::vector<ReductionState>& reductions,
                                         const plan::ReductionLoops& loops) {
  const Shape& input_shape = loops.input_shape;
  const int state_slots = kStateWords * static_cast<int>(reductions.size());
  const std::string slots = std::to_string(state_slots);
  result_.state_slots = state_slots;
  CudaEntry entry;
  entry.range_node = layout_.position.at(reductions.front().node);
  entry.uses_workspace = true;

  entry.kind = CudaEntry::Kind::Partial;
  entry.fixed_count = loops.reduced;
  begin_entry(entry, "partial");
  declare_shared_state(writer_, reductions);
  for (const ReductionState& r : reductions) declare_state(writer_, r);
  writer_.open("for (lz_i64 r = lz_global_thread(); r < count; r += lz_grid_threads())");
  {
    Block block(*this);
    Index index{&input_shape, {}, "r"};
    accumulate_at(reductions, loops.in_first_loop, index);
  }
  writer_.close();
  combine_block(writer_, reductions);
  writer_.open("if (threadIdx.x == 0)");
  for (const ReductionState& r : reductions)
    write_state(writer_, r, "(1 + (lz_i64)blockIdx.x) * " + slots);
  writer_.close();
  end_entry();

  entry.kind = CudaEntry::Kind::Finish;
  entry.fixed_count = -1;
  begin_entry(entry, "finish");
  declare_shared_state(writer_, reductions);
  for (const ReductionState& r : reductions) declare_state(writer_, r);
  writer_.open("for (lz_i64 b = threadIdx.x; b < count; b += blockDim.x)");
  for (const ReductionState& r : reductions) {
    read_state(writer_, r, "(1 + b) * " + slots, "block_");
    combine_state(writer_, r, "block_");
  }
  writer_.close();
  combine_block(writer_, reductions);
  writer_.open("if (threadIdx.x == 0)");
  for (const ReductionState& r : reductions) write_state(writer_, r, "0");
  bind_results(reductions);
  {
    Block block(*this);
    for (const Node* output : loops.at_kept) {
      Index index{&output->shape, {}, "0"};
      store(output, emit_value(output, index), "0");
    }
  }
  reduction_values_.clear();
  writer_.close();
  end_entry();

  if (loops.in_final_loop.empty()) return;
  entry.kind = CudaEntry::Kind::Broadcast;
  entry.fixed_count = loops.reduced;
  begin_entry(entry, "broadcast");
  for (const ReductionState& r : reductions) read_state(writer_, r, "0", "");
  bind_results(reductions);
  writer_.open("for (lz_i64 r = lz_global_thread(); r < count; r += lz_grid_threads())");
  {
    Block block(*this);
    Index index{&input_shape, {}, "r"};
    for (const Node* output : loops.in_final_loop) {
      store(output, emit_value(output, index), "r");
    }
  }
  writer_.close();
  reduction_values_.clear();
  end_entry();
}

}  // namespace lz::codegen::cuda::detail
