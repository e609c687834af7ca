#include "codegen/cuda/source.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "codegen/cuda/element_source.h"
#include "codegen/cuda/preamble.h"
#include "codegen/cuda/reduction_source.h"
#include "codegen/cuda/source_writer.h"
#include "codegen/value_emitter.h"
#include "lazuli/error.h"
#include "plan/kernel_layout.h"
#include "plan/kernel_signature.h"
#include "plan/unsupported_kernel.h"

namespace lz::codegen::cuda {
namespace {

using ir::Node;
using ir::Op;

/// Reduced elements from which a reduction to one value runs as per-block partial states and a
/// finishing block instead of one block.
constexpr int64_t kSplitReductionElements = 1 << 14;

/// Reduced elements up to which one thread computes a kept position alone: a block would leave
/// most of its threads idle.
constexpr int64_t kThreadPerPositionElements = 64;

/// Iterations of a block's loop over reduced elements unrolled together: 8 loads of 4 bytes in
/// flight per thread (64 KiB per multiprocessor at full occupancy) cover DRAM's latency.
constexpr int kBlockLoopUnroll = 8;

/// Blocks a multiprocessor must hold at once of a kernel reducing with a block per position:
/// 8 x 256 threads fill an sm_90 multiprocessor (2048 threads), at 32 registers a thread.
constexpr int kBlocksPerMultiprocessor = 8;

/// Shared memory a block may fill with the rows of its inputs that later passes over the reduced
/// elements read again (staged rows): 32 KiB leaves room for 7 blocks of 256 threads on an sm_90
/// multiprocessor (228 KiB).
constexpr int64_t kStagedRowBytes = 32 * 1024;

/// Elements per group of a flat kernel's vector loop (lz_pack4 in the preamble).
constexpr int kPackElements = 4;

std::string literal(int64_t value) {
  if (value == INT64_MIN) return "(-9223372036854775807LL - 1)";
  return std::to_string(value) + "LL";
}

/// Positions and values are C++ expressions: variables the emitter declares, literals and the
/// loops' induction variables.
class SourceEmitter : public ValueEmitter<SourceEmitter, std::string> {
 public:
  SourceEmitter(const plan::Kernel& kernel, std::string name)
      : ValueEmitter(kernel, plan::exact_sizes(kernel)), kernel_(kernel), name_(std::move(name)) {}

  CudaKernelSource emit() {
    if (layout_.reduction) emit_reduction_entries(*layout_.reduction);
    for (const plan::ElementwiseLoop& loop : layout_.elementwise_loops) {
      emit_elementwise_entry(loop);
    }
    result_.definitions = writer_.take();
    return std::move(result_);
  }

 private:
  friend ValueEmitter;

  // ---------------------------------------------------------------------------------------
  // Variables and blocks

  /// Declares `const <type> v<N> = <expression>;` and returns the variable's name.
  std::string declare(const char* type, const std::string& expression) {
    std::string name = "v" + std::to_string(next_variable_++);
    writer_.line("const " + std::string(type) + " " + name + " = " + expression + ";");
    return name;
  }

  /// Values computed in a block of the generated code are not visible after it: the memo of an
  /// inner block is dropped when it closes.
  class Block {
   public:
    explicit Block(SourceEmitter& emitter) : emitter_(emitter), saved_(emitter.memo_) {}
    ~Block() { emitter_.memo_ = std::move(saved_); }
    Block(const Block&) = delete;
    Block& operator=(const Block&) = delete;

   private:
    SourceEmitter& emitter_;
    Memo saved_;
  };

  // ---------------------------------------------------------------------------------------
  // Entries

  std::string buffer_name(const Node* node) const {
    for (size_t i = 0; i < kernel_.inputs.size(); ++i) {
      if (kernel_.inputs[i].get() == node) return "in" + std::to_string(i);
    }
    for (size_t i = 0; i < kernel_.outputs.size(); ++i) {
      if (kernel_.outputs[i].get() == node) return "out" + std::to_string(i);
    }
    throw Error("internal: node is neither an input nor an output of the kernel");
  }

  /// Writes the signature of entry `<name>_<suffix>` (the ABI in source.h) and opens its body.
  void begin_entry(CudaEntry entry, const std::string& suffix) {
    entry.symbol = name_ + "_" + suffix;
    next_variable_ = 0;
    memo_.clear();
    std::vector<std::string> parameters;
    for (size_t i = 0; i < kernel_.inputs.size(); ++i) {
      parameters.push_back("const " + std::string(storage_type(kernel_.inputs[i]->dtype)) +
                           "* __restrict__ in" + std::to_string(i));
    }
    for (size_t i = 0; i < kernel_.outputs.size(); ++i) {
      parameters.push_back(std::string(storage_type(kernel_.outputs[i]->dtype)) +
                           "* __restrict__ out" + std::to_string(i));
    }
    if (entry.uses_workspace) parameters.push_back("lz_u64* __restrict__ workspace");
    parameters.push_back("lz_i64 count");
    for (int s = 0; s < layout_.scalar_count; ++s)
      parameters.push_back("lz_u64 s" + std::to_string(s));
    // A block per kept position keeps its row's loads in flight only with many blocks resident:
    // softmax's exp-sum-divide kernel took 48 registers, which left 5 blocks (62% occupancy,
    // 55% of DRAM bandwidth on the H200); 8 blocks bound it to 32, which it fits unspilled.
    const bool block_per_position =
        entry.kind == CudaEntry::Kind::Reduction && entry.threads_per_position == kCudaBlockSize;
    std::string signature =
        "extern \"C\" __global__ void __launch_bounds__(" + std::to_string(kCudaBlockSize) +
        (block_per_position ? ", " + std::to_string(kBlocksPerMultiprocessor) : "") + ") " +
        entry.symbol + "(";
    for (size_t i = 0; i < parameters.size(); ++i) {
      signature += (i == 0 ? "" : ", ") + parameters[i];
    }
    writer_.open(signature + ")");
    result_.entries.push_back(std::move(entry));
  }

  void end_entry() {
    writer_.close();
    writer_.line("");
  }

  void store(const Node* output, const std::string& value, const std::string& position) {
    const std::string stored = output->dtype == bool_ ? "(lz_bool_storage)(" + value + ")" : value;
    if (!lane_.empty() && output->size() != 1) {
      writer_.line(buffer_name(output) + "_pack.v[" + lane_ + "] = " + stored + ";");
    } else {
      writer_.line(buffer_name(output) + "[" + position + "] = " + stored + ";");
    }
  }

  // ---------------------------------------------------------------------------------------
  // Indices

  // Positions are non-negative and within lz_i64 (value_emitter.h).
  std::string index_constant(int64_t value) { return literal(value); }
  std::string index_scalar(const Node* node, int slot) { return "(lz_i64)" + scalar(node, slot); }
  std::string index_add(const std::string& a, const std::string& b) {
    if (a == literal(0)) return b;
    if (b == literal(0)) return a;
    return "(" + a + " + " + b + ")";
  }
  std::string index_scale(const std::string& x, int64_t factor) {
    if (factor == 0) return literal(0);
    return factor == 1 ? x : "(" + x + " * " + literal(factor) + ")";
  }
  std::string index_divide(const std::string& x, int64_t divisor) {
    return index_divide(x, literal(divisor));
  }
  std::string index_remainder(const std::string& x, int64_t divisor) {
    return index_remainder(x, literal(divisor));
  }
  // The emitter core's forms for runtime extents. CUDA code holds exact sizes (its grids and
  // shared memory follow them, plan::exact_sizes), so these only ever see literals.
  std::string index_divide(const std::string& x, const std::string& divisor) {
    return declare("lz_i64", x + " / " + divisor);
  }
  std::string index_remainder(const std::string& x, const std::string& divisor) {
    return declare("lz_i64", x + " % " + divisor);
  }
  std::string index_multiply(const std::string& a, const std::string& b) {
    return "(" + a + " * " + b + ")";
  }
  std::string runtime_extent(int slot) { return "(lz_i64)s" + std::to_string(slot); }
  std::string name_index(const std::string& x) { return declare("lz_i64", x); }

  // ---------------------------------------------------------------------------------------
  // Values

  std::string scalar(const Node* node, int slot) const {
    return "s" + std::to_string(layout_.scalar_slot.at(node) + slot);
  }
  std::string scalar_as_double(const Node* node, int slot) const {
    return "__longlong_as_double((lz_i64)" + scalar(node, slot) + ")";
  }

  std::string leaf(const Node* node, Index& index) {
    return declare(value_type(node->dtype), leaf_expression(node, index));
  }
  std::string cast(const Node* node, const std::string& x) {
    return declare(value_type(node->dtype),
                   cast_expression(node->inputs[0]->dtype, node->dtype, x));
  }
  std::string unary(const Node* node, const std::string& x) {
    return declare(value_type(node->dtype), unary_expression(node->op, node->dtype, x));
  }
  std::string binary(const Node* node, const std::string& x, const std::string& y) {
    return declare(value_type(node->dtype),
                   binary_expression(node->op, node->inputs[0]->dtype, x, y));
  }
  std::string select(const Node* node, const std::string& condition, const std::string& if_true,
                     const std::string& if_false) {
    return declare(value_type(node->dtype), condition + " ? " + if_true + " : " + if_false);
  }
  [[noreturn]] void refuse(const Node* node) {
    throw Error("[" + std::string(ir::op_name(node->op)) +
                "] the CUDA code generator does not generate it (" + dtype_name(node->dtype) + " " +
                shape_string(node->shape) + "): it runs as an external kernel");
  }

  std::string load_input(const Node* node, Index& index) {
    const std::string buffer = buffer_name(node);
    std::string stored;
    const auto staged = staged_rows_.find(node);
    const bool at_loop_position = staged != staged_rows_.end() &&
                                  index.shape == loop_index_.shape &&
                                  index.dims == loop_index_.dims;
    if (at_loop_position && staging_ == Staging::Load) {
      stored = staged->second + "[r]";
    } else if (node->size() == 1) {
      stored = buffer + "[0]";
    } else if (!lane_.empty()) {
      stored = buffer + "_pack.v[" + lane_ + "]";  // flat: read at the loop's position
    } else {
      stored = buffer + "[" + linear_of(index) + "]";
    }
    if (at_loop_position && staging_ == Staging::Store) {
      writer_.line(staged->second + "[r] = " + stored + ";");
      stored = staged->second + "[r]";
    }
    return declare(value_type(node->dtype),
                   node->dtype == bool_ ? "(" + stored + " != 0)" : stored);
  }

  /// The inputs a block-per-position kernel stages in shared memory: those the first stage
  /// reads at the loop's position (through elementwise nodes of the input's shape, as softmax's
  /// max reads x), while later passes read them again, as far as kStagedRowBytes allows. Each
  /// thread reads back only what it stored itself, so staging needs no barrier.
  void choose_staged_rows(const plan::ReductionLoops& loops, int passes) {
    if (passes < 2) return;
    std::vector<const Node*> pending;
    for (const Node* reduction : loops.stages.front())
      pending.push_back(reduction->inputs[0].get());
    std::unordered_set<const Node*> seen;
    int64_t bytes = 0;
    while (!pending.empty()) {
      const Node* node = pending.back();
      pending.pop_back();
      if (node->shape != loops.input_shape || !seen.insert(node).second) continue;
      if (layout_.position.contains(node)) {
        const ir::OpKind kind = ir::op_info(node->op).kind;
        if (kind != ir::OpKind::Unary && kind != ir::OpKind::Binary &&
            kind != ir::OpKind::Ternary) {
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

  std::string leaf_expression(const Node* node, Index& index) {
    const DType dtype = node->dtype;
    switch (node->op) {
      case Op::Full: {
        const std::string bits = scalar(node, 0);
        switch (dtype) {
          case DType::Float32: return "__uint_as_float((unsigned)" + bits + ")";
          case DType::Float64: return "__longlong_as_double((lz_i64)" + bits + ")";
          case DType::Int32: return "(int)(unsigned)" + bits;
          case DType::Int64: return "(lz_i64)" + bits;
          case DType::Bool: return "(" + bits + " != 0)";
        }
        break;
      }
      case Op::Arange: {
        const std::string& position = linear_of(index);
        if (is_floating(dtype)) {
          // start + i * step in float64, rounded once.
          return std::string(dtype == float32 ? "(float)" : "") + "(" + scalar_as_double(node, 0) +
                 " + (double)" + position + " * " + scalar_as_double(node, 1) + ")";
        }
        if (is_integer(dtype)) {
          const std::string offset =
              reference_call("wrapping_mul", int64, position + ", (lz_i64)" + scalar(node, 1));
          return std::string(dtype == int32 ? "(int)" : "") +
                 reference_call("wrapping_add", int64,
                                "(lz_i64)" + scalar(node, 0) + ", " + offset);
        }
        break;
      }
      case Op::RandomUniform:
      case Op::RandomNormal: {
        const bool uniform = node->op == Op::RandomUniform;
        if (dtype == bool_ || (!uniform && !is_floating(dtype))) break;
        return reference_call(uniform ? "uniform_element_as" : "normal_element_as", dtype,
                              scalar(node, 0) + ", " + linear_of(index) + ", " +
                                  scalar_as_double(node, 1) + ", " + scalar_as_double(node, 2));
      }
      default: break;
    }
    throw Error("[" + std::string(ir::op_name(node->op)) + "] the CUDA code generator has no " +
                dtype_name(dtype) + " form (shape " + shape_string(node->shape) + ")");
  }

  std::pair<std::string, std::string> gather_position(const Node*, const std::string& raw,
                                                      const std::string& extent) {
    const std::string index = declare("lz_i64", "(lz_i64)" + raw);
    const std::string wrapped =
        declare("lz_i64", index + " < 0 ? " + index + " + " + extent + " : " + index);
    const std::string inside =
        declare("bool", "(unsigned long long)" + wrapped + " < (unsigned long long)" + extent);
    return {declare("lz_i64", inside + " ? " + wrapped + " : 0"), inside};
  }
  std::string gather_fill(const Node* node) {
    switch (node->dtype) {
      case DType::Float32: return "lz_nan_f32()";
      case DType::Float64: return "lz_nan_f64()";
      default: return extremum_identity(node->dtype, node->dtype != bool_);
    }
  }

  /// A branch per input: only the input holding the position is read.
  std::string concatenate(const Node* node, Index& index) {
    const int64_t axis = node->axes[0];
    const std::vector<std::string> dims = dims_of(index);
    std::vector<const Node*> inputs;
    for (const ir::NodePtr& input : node->inputs) {
      if (input->shape[axis] != 0) inputs.push_back(input.get());
    }
    const std::string result = "v" + std::to_string(next_variable_++);
    // With every input empty along the axis the result has no elements and the value is never
    // used, but it is still read: it starts as 0 rather than undefined.
    writer_.line(std::string(value_type(node->dtype)) + " " + result +
                 (inputs.empty() ? " = 0;" : ";"));
    int64_t offset = 0;
    for (size_t k = 0; k < inputs.size(); ++k) {
      const Node* input = inputs[k];
      const int64_t end = offset + input->shape[axis];
      const std::string condition = dims[axis] + " < " + literal(end);
      if (k == 0) {
        writer_.open(inputs.size() == 1 ? "" : "if (" + condition + ")");
      } else {
        writer_.open(k + 1 == inputs.size() ? "else" : "else if (" + condition + ")");
      }
      {
        Block block(*this);
        Index at{&input->shape, dims, ""};
        if (offset != 0) at.dims[axis] = "(" + dims[axis] + " - " + literal(offset) + ")";
        writer_.line(result + " = " + emit_value(input, at) + ";");
      }
      writer_.close();
      offset = end;
    }
    return result;
  }

  // ---------------------------------------------------------------------------------------
  // Elementwise entries

  /// An entry over the elements of the loop's range node computing the loop's outputs.
  void emit_elementwise_entry(const plan::ElementwiseLoop& loop) {
    const Node* target = loop.range;
    CudaEntry entry;
    entry.kind = CudaEntry::Kind::Elementwise;
    entry.range_node = layout_.position.at(target);
    entry.elements_per_thread = layout_.flat ? kPackElements : 1;
    begin_entry(entry, "loop" + std::to_string(result_.entries.size()));
    const auto compute_at = [&](const std::string& position) {
      Block block(*this);
      Index index{&target->shape, {}, position};
      for (const Node* output : loop.outputs) {
        Index at = output_index(output, index);
        store(output, emit_value(output, at), position);
      }
    };
    if (!layout_.flat || target->size() == 1) {
      writer_.open("for (lz_i64 i = lz_global_thread(); i < count; i += lz_grid_threads())");
      compute_at("i");
      writer_.close();
    } else {
      emit_flat_groups(loop.outputs, compute_at);
    }
    end_entry();
  }

  /// A flat kernel's loop: groups of four elements, loaded and stored as 16-byte accesses, the
  /// last group element by element. Every loop over lanes unrolls, so the packs stay in
  /// registers; the lanes past the end compute from zeros and are not stored.
  template <class ComputeAt>
  void emit_flat_groups(const std::vector<const Node*>& outputs, const ComputeAt& compute_at) {
    const std::string four = std::to_string(kPackElements);
    const auto pack_of = [](const Node* node) {
      return "lz_pack4<" + std::string(storage_type(node->dtype)) + ">";
    };
    const auto each_lane = [&](const std::string& statement) {
      writer_.line("#pragma unroll");
      writer_.line("for (int lane = 0; lane < " + four + "; ++lane) if (base + lane < count) " +
                   statement);
    };
    const std::string groups =
        declare("lz_i64", "(count + " + std::to_string(kPackElements - 1) + ") / " + four);
    writer_.open("for (lz_i64 g = lz_global_thread(); g < " + groups + "; g += lz_grid_threads())");
    writer_.line("const lz_i64 base = g * " + four + ";");
    writer_.line("const bool whole = base + " + four + " <= count;");
    for (const ir::NodePtr& input : kernel_.inputs) {
      if (input->size() == 1) continue;
      const std::string buffer = buffer_name(input.get());
      writer_.line(pack_of(input.get()) + " " + buffer + "_pack = {};");
      writer_.line("if (whole) " + buffer + "_pack = *reinterpret_cast<const " +
                   pack_of(input.get()) + "*>(" + buffer + " + base);");
      writer_.open("else");
      each_lane(buffer + "_pack.v[lane] = " + buffer + "[base + lane];");
      writer_.close();
    }
    for (const Node* output : outputs)
      writer_.line(pack_of(output) + " " + buffer_name(output) + "_pack;");
    writer_.line("#pragma unroll");
    writer_.open("for (int lane = 0; lane < " + four + "; ++lane)");
    writer_.line("const lz_i64 i = base + lane;");
    lane_ = "lane";
    compute_at("i");
    lane_.clear();
    writer_.close();
    for (const Node* output : outputs) {
      const std::string buffer = buffer_name(output);
      writer_.line("if (whole) *reinterpret_cast<" + pack_of(output) + "*>(" + buffer +
                   " + base) = " + buffer + "_pack;");
      writer_.open("else");
      each_lane(buffer + "[base + lane] = " + buffer + "_pack.v[lane];");
      writer_.close();
    }
    writer_.close();
  }

  /// Declares each reduction's result from its state and makes it the reduction's value.
  void bind_results(const std::vector<ReductionState>& reductions) {
    for (const ReductionState& r : reductions) {
      reduction_values_[r.node] = declare(value_type(r.node->dtype), result_expression(r));
    }
  }

  // ---------------------------------------------------------------------------------------
  // Reduction entries

  void emit_reduction_entries(const plan::ReductionLoops& loops) {
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
  Index input_index(const plan::ReductionLoops& loops, const std::vector<std::string>& kept_dims,
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
  void accumulate_at(const std::vector<ReductionState>& reductions,
                     const std::vector<const Node*>& outputs, Index& index) {
    for (const ReductionState& r : reductions) {
      const std::string x = input_value(*r.node, 0, index);
      update_state(writer_, r, x, tracks_index(r) ? dims_of(index)[r.node->axes[0]] : "");
    }
    for (const Node* output : outputs) {
      const std::string value = emit_value(output, index);
      store(output, value, linear_of(index));
    }
  }

  /// One kept position per thread (few reduced elements) or per block, grid-stride: a loop over
  /// the reduced elements per stage, then the kept-shaped outputs, then the final loop.
  void emit_reduction_per_position(const std::vector<std::vector<ReductionState>>& stages,
                                   const plan::ReductionLoops& loops) {
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
    writer_.open(by_block
                     ? "for (lz_i64 k = blockIdx.x; k < count; k += gridDim.x)"
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
  void emit_split_reduction(const std::vector<ReductionState>& reductions,
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

  const plan::Kernel& kernel_;
  const std::string name_;

  CudaKernelSource result_;
  SourceWriter writer_;
  int next_variable_ = 0;
  /// "lane" inside a flat kernel's vector loop: inputs and outputs go through the packs.
  std::string lane_;
  /// Inputs staged in shared memory by the first pass over the reduced elements, and how the
  /// pass being emitted reads them at loop_index_, its position (choose_staged_rows).
  enum class Staging { Off, Store, Load };
  std::unordered_map<const Node*, std::string> staged_rows_;
  Staging staging_ = Staging::Off;
  Index loop_index_;
};

}  // namespace

std::string CudaKernelSource::translation_unit() const {
  return std::string(device_preamble()) + "\n" + definitions;
}

bool is_cuda_compilable(const plan::Kernel& kernel) {
  for (const ir::NodePtr& node : kernel.nodes) {
    if (node->op == Op::MatMul || node->op == Op::Data || ir::is_collective(node->op)) return false;
  }
  return !kernel.nodes.empty();
}

CudaKernelSource generate_cuda_source(const plan::Kernel& kernel, const std::string& name) {
  return SourceEmitter(kernel, name).emit();
}

}  // namespace lz::codegen::cuda
