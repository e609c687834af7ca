#include "codegen/cuda/source.h"

#include <string>
#include <utility>

#include "codegen/cuda/element_source.h"
#include "codegen/cuda/preamble.h"
#include "codegen/cuda/source_emitter.h"
#include "lazuli/error.h"
#include "plan/kernel_layout.h"
#include "plan/kernel_signature.h"
#include "plan/unsupported_kernel.h"

namespace lz::codegen::cuda {
namespace detail {
namespace {

/// Blocks a multiprocessor must hold at once of a kernel reducing with a block per position:
/// 8 x 256 threads fill an sm_90 multiprocessor (2048 threads), at 32 registers a thread.
constexpr int kBlocksPerMultiprocessor = 8;

/// Elements per group of a flat kernel's vector loop (lz_pack4 in the preamble).
constexpr int kPackElements = 4;

}  // namespace

std::string literal(int64_t value) {
  if (value == INT64_MIN) return "(-9223372036854775807LL - 1)";
  return std::to_string(value) + "LL";
}

CudaKernelSource SourceEmitter::emit() {
  if (layout_.reduction) emit_reduction_entries(*layout_.reduction);
  for (const plan::ElementwiseLoop& loop : layout_.elementwise_loops) {
    emit_elementwise_entry(loop);
  }
  result_.definitions = writer_.take();
  return std::move(result_);
}

// ---------------------------------------------------------------------------------------
// Variables and blocks

/// Declares `const <type> v<N> = <expression>;` and returns the variable's name.
std::string SourceEmitter::declare(const char* type, const std::string& expression) {
  std::string name = "v" + std::to_string(next_variable_++);
  writer_.line("const " + std::string(type) + " " + name + " = " + expression + ";");
  return name;
}

// ---------------------------------------------------------------------------------------
// Entries

std::string SourceEmitter::buffer_name(const Node* node) const {
  for (size_t i = 0; i < kernel_.inputs.size(); ++i) {
    if (kernel_.inputs[i].get() == node) return "in" + std::to_string(i);
  }
  for (size_t i = 0; i < kernel_.outputs.size(); ++i) {
    if (kernel_.outputs[i].get() == node) return "out" + std::to_string(i);
  }
  throw Error("internal: node is neither an input nor an output of the kernel");
}

/// Writes the signature of entry `<name>_<suffix>` (the ABI in source.h) and opens its body.
void SourceEmitter::begin_entry(CudaEntry entry, const std::string& suffix) {
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

void SourceEmitter::end_entry() {
  writer_.close();
  writer_.line("");
}

void SourceEmitter::store(const Node* output, const std::string& value,
                          const std::string& position) {
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
std::string SourceEmitter::index_constant(int64_t value) { return literal(value); }

std::string SourceEmitter::index_scalar(const Node* node, int slot) {
  return "(lz_i64)" + scalar(node, slot);
}

std::string SourceEmitter::index_add(const std::string& a, const std::string& b) {
  if (a == literal(0)) return b;
  if (b == literal(0)) return a;
  return "(" + a + " + " + b + ")";
}

std::string SourceEmitter::index_scale(const std::string& x, int64_t factor) {
  if (factor == 0) return literal(0);
  return factor == 1 ? x : "(" + x + " * " + literal(factor) + ")";
}

std::string SourceEmitter::index_divide(const std::string& x, int64_t divisor) {
  return index_divide(x, literal(divisor));
}

std::string SourceEmitter::index_remainder(const std::string& x, int64_t divisor) {
  return index_remainder(x, literal(divisor));
}

// The emitter core's forms for runtime extents. CUDA code holds exact sizes (its grids and
// shared memory follow them, plan::exact_sizes), so these only ever see literals.
std::string SourceEmitter::index_divide(const std::string& x, const std::string& divisor) {
  return declare("lz_i64", x + " / " + divisor);
}

std::string SourceEmitter::index_remainder(const std::string& x, const std::string& divisor) {
  return declare("lz_i64", x + " % " + divisor);
}

std::string SourceEmitter::index_multiply(const std::string& a, const std::string& b) {
  return "(" + a + " * " + b + ")";
}

std::string SourceEmitter::runtime_extent(int slot) { return "(lz_i64)s" + std::to_string(slot); }

std::string SourceEmitter::name_index(const std::string& x) { return declare("lz_i64", x); }

// ---------------------------------------------------------------------------------------
// Values

std::string SourceEmitter::scalar(const Node* node, int slot) const {
  return "s" + std::to_string(layout_.scalar_slot.at(node) + slot);
}

std::string SourceEmitter::scalar_as_double(const Node* node, int slot) const {
  return "__longlong_as_double((lz_i64)" + scalar(node, slot) + ")";
}

std::string SourceEmitter::leaf(const Node* node, Index& index) {
  return declare(value_type(node->dtype), leaf_expression(node, index));
}

std::string SourceEmitter::cast(const Node* node, const std::string& x) {
  return declare(value_type(node->dtype), cast_expression(node->inputs[0]->dtype, node->dtype, x));
}

std::string SourceEmitter::unary(const Node* node, const std::string& x) {
  return declare(value_type(node->dtype), unary_expression(node->op, node->dtype, x));
}

std::string SourceEmitter::binary(const Node* node, const std::string& x, const std::string& y) {
  return declare(value_type(node->dtype),
                 binary_expression(node->op, node->inputs[0]->dtype, x, y));
}

std::string SourceEmitter::select(const Node* node, const std::string& condition,
                                  const std::string& if_true, const std::string& if_false) {
  return declare(value_type(node->dtype), condition + " ? " + if_true + " : " + if_false);
}

[[noreturn]] void SourceEmitter::refuse(const Node* node) {
  throw Error("[" + std::string(ir::op_name(node->op)) +
              "] the CUDA code generator does not generate it (" + dtype_name(node->dtype) + " " +
              shape_string(node->shape) + "): it runs as an external kernel");
}

std::string SourceEmitter::load_input(const Node* node, Index& index) {
  const std::string buffer = buffer_name(node);
  std::string stored;
  const auto staged = staged_rows_.find(node);
  const bool at_loop_position = staged != staged_rows_.end() && index.shape == loop_index_.shape &&
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
  return declare(value_type(node->dtype), node->dtype == bool_ ? "(" + stored + " != 0)" : stored);
}

std::string SourceEmitter::leaf_expression(const Node* node, Index& index) {
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
               reference_call("wrapping_add", int64, "(lz_i64)" + scalar(node, 0) + ", " + offset);
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

std::pair<std::string, std::string> SourceEmitter::gather_position(const Node*,
                                                                   const std::string& raw,
                                                                   const std::string& extent) {
  const std::string index = declare("lz_i64", "(lz_i64)" + raw);
  const std::string wrapped =
      declare("lz_i64", index + " < 0 ? " + index + " + " + extent + " : " + index);
  const std::string inside =
      declare("bool", "(unsigned long long)" + wrapped + " < (unsigned long long)" + extent);
  return {declare("lz_i64", inside + " ? " + wrapped + " : 0"), inside};
}

std::string SourceEmitter::gather_fill(const Node* node) {
  switch (node->dtype) {
    case DType::Float32: return "lz_nan_f32()";
    case DType::Float64: return "lz_nan_f64()";
    default: return extremum_identity(node->dtype, node->dtype != bool_);
  }
}

/// A branch per input: only the input holding the position is read.
std::string SourceEmitter::concatenate(const Node* node, Index& index) {
  const int64_t axis = node->axes()[0];
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
void SourceEmitter::emit_elementwise_entry(const plan::ElementwiseLoop& loop) {
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
void SourceEmitter::emit_flat_groups(const std::vector<const Node*>& outputs,
                                     const ComputeAt& compute_at) {
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

}  // namespace detail

std::string CudaKernelSource::translation_unit() const {
  return std::string(device_preamble()) + "\n" + definitions;
}

bool is_cuda_compilable(const plan::Kernel& kernel) {
  for (const ir::NodePtr& node : kernel.nodes) {
    if (node->op == ir::Op::MatMul || node->op == ir::Op::Data || ir::is_collective(node->op)) {
      return false;
    }
  }
  return !kernel.nodes.empty();
}

CudaKernelSource generate_cuda_source(const plan::Kernel& kernel, const std::string& name) {
  return detail::SourceEmitter(kernel, name).emit();
}

}  // namespace lz::codegen::cuda
