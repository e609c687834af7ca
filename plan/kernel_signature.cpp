#include "plan/kernel_signature.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <span>

#include "ir/node_positions.h"
#include "ir/op.h"
#include "plan/kernel_layout.h"

namespace lz::plan {
namespace {

bool is_elementwise(ir::Op op) {
  const ir::OpKind kind = ir::op_info(op).kind;
  return kind == ir::OpKind::Unary || kind == ir::OpKind::Binary || kind == ir::OpKind::Ternary;
}

void append_number(std::string& key, int64_t value) {
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof(digits), value).ptr;
  key.append(digits, end);
}

void append_list(std::string& key, char tag, std::span<const int64_t> values) {
  key += tag;
  for (int64_t value : values) {
    append_number(key, value);
    key += ',';
  }
}

/// A shape as a Sizes::Runtime key holds it: each runtime extent as E and its index in
/// `extents` (runtime_extents), the smaller extents as numbers.
void append_runtime_shape(std::string& key, const Shape& shape,
                          const std::vector<int64_t>& extents) {
  key += '(';
  for (int64_t extent : shape) {
    if (extent >= kMinRuntimeExtent) {
      key += 'E';
      append_number(key, std::find(extents.begin(), extents.end(), extent) - extents.begin());
    } else {
      append_number(key, extent);
    }
    key += ',';
  }
}

/// The layout's choices that sizes make beyond shape equality (kernel_layout.h): whether the
/// reductions to one value split across threads, and which outputs have the results' size.
void append_size_choices(std::string& key, const Kernel& kernel) {
  const auto reduction = std::find_if(kernel.nodes.begin(), kernel.nodes.end(), [](auto& node) {
    return ir::op_info(node->op).kind == ir::OpKind::Reduction;
  });
  if (reduction == kernel.nodes.end()) return;
  if (cpu_splits_across_threads(**reduction)) key += ";split";
  const int64_t kept = kept_elements(**reduction);
  key += ";kept";
  for (const ir::NodePtr& output : kernel.outputs) key += output->size() == kept ? '=' : '!';
}

/// Bits of a fill value converted to the node's dtype, as the interpreter converts it.
uint64_t element_bits(DType dtype, const ir::ScalarParam& value) {
  switch (dtype) {
    case DType::Float32: return std::bit_cast<uint32_t>(static_cast<float>(value.floating));
    case DType::Float64: return std::bit_cast<uint64_t>(value.floating);
    case DType::Int32:
      return static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(value.integer)));
    case DType::Int64: return static_cast<uint64_t>(value.integer);
    case DType::Bool: return value.integer != 0 ? 1 : 0;
  }
  return 0;
}

}  // namespace

int position_of(const std::vector<ir::NodePtr>& nodes, const ir::Node* node) {
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].get() == node) return static_cast<int>(i);
  }
  return -1;
}

bool is_compilable(const Kernel& kernel) {
  // A plan cache hit asks for every kernel at every evaluation: the memo keeps the walk to one.
  KernelDescription* memo = kernel.description.get();
  if (memo != nullptr) {
    const int8_t known = memo->compilable.load(std::memory_order_relaxed);
    if (known >= 0) return known == 1;
  }
  bool compilable = !kernel.nodes.empty();
  for (const ir::NodePtr& node : kernel.nodes) {
    if (node->op == ir::Op::MatMul || node->op == ir::Op::Data || ir::is_collective(node->op)) {
      compilable = false;
      break;
    }
  }
  if (memo != nullptr) memo->compilable.store(compilable ? 1 : 0, std::memory_order_relaxed);
  return compilable;
}

bool is_flat(const Kernel& kernel) {
  const int64_t root_size = kernel.nodes.back()->size();
  for (const ir::NodePtr& node : kernel.nodes) {
    const ir::OpKind kind = ir::op_info(node->op).kind;
    const bool positional =
        kind == ir::OpKind::Leaf || is_elementwise(node->op) || node->op == ir::Op::Reshape;
    if (!positional) return false;
    if (node->size() != 1 && node->size() != root_size) return false;
    for (const ir::NodePtr& input : node->inputs) {
      const bool aligned = input->size() == node->size() &&
                           (input->shape == node->shape || node->op == ir::Op::Reshape);
      if (input->size() != 1 && !aligned) return false;
    }
  }
  for (const ir::NodePtr& output : kernel.outputs) {
    if (output->size() != root_size) return false;
  }
  return true;
}

bool is_memory_bound(const Kernel& kernel) {
  KernelDescription* memo = kernel.description.get();
  if (memo != nullptr) {
    const int8_t known = memo->memory_bound.load(std::memory_order_relaxed);
    if (known >= 0) return known == 1;
  }
  const bool memory_bound =
      std::all_of(kernel.nodes.begin(), kernel.nodes.end(), [](const ir::NodePtr& node) {
        return ir::op_info(node->op).cost == ir::CostClass::MemoryBound;
      });
  if (memo != nullptr) memo->memory_bound.store(memory_bound ? 1 : 0, std::memory_order_relaxed);
  return memory_bound;
}

Sizes cpu_sizes(const Kernel& kernel) {
  if (is_flat(kernel)) return Sizes::Flat;
  for (const ir::NodePtr& node : kernel.nodes) {
    if (node->op == ir::Op::Concatenate) return Sizes::Exact;
  }
  return Sizes::Runtime;
}

Sizes exact_sizes(const Kernel& kernel) { return is_flat(kernel) ? Sizes::Flat : Sizes::Exact; }

std::vector<int64_t> runtime_extents(const Kernel& kernel) {
  std::vector<int64_t> extents;
  const auto collect = [&](const ir::Node& node) {
    for (int64_t extent : node.shape) {
      if (extent >= kMinRuntimeExtent &&
          std::find(extents.begin(), extents.end(), extent) == extents.end()) {
        extents.push_back(extent);
      }
    }
  };
  for (const ir::NodePtr& input : kernel.inputs) collect(*input);
  for (const ir::NodePtr& node : kernel.nodes) collect(*node);
  return extents;
}

std::string kernel_key(const Kernel& kernel, Sizes sizes) {
  static constexpr const char* kSizesTag[] = {"flat;", "shaped;", "runtime;"};
  std::string key = kSizesTag[static_cast<int>(sizes)];
  key.reserve(32 * (kernel.nodes.size() + kernel.inputs.size()));
  const std::vector<int64_t> extents =
      sizes == Sizes::Runtime ? runtime_extents(kernel) : std::vector<int64_t>{};
  // Built here rather than searched per input: a kernel has up to a few hundred nodes.
  const ir::NodePositions nodes(kernel.nodes);
  const ir::NodePositions inputs(kernel.inputs);
  const auto append_value_type = [&](const ir::Node& node) {
    key += dtype_short_name(node.dtype);
    switch (sizes) {
      case Sizes::Flat: key += node.size() == 1 ? 's' : 'v'; break;
      case Sizes::Exact: append_list(key, '(', node.shape); break;
      case Sizes::Runtime: append_runtime_shape(key, node.shape, extents); break;
    }
  };
  for (const ir::NodePtr& input : kernel.inputs) {
    key += "in ";
    append_value_type(*input);
    key += ';';
  }
  for (const ir::NodePtr& node : kernel.nodes) {
    key += ir::op_name(node->op);
    key += ' ';
    append_value_type(*node);
    if (node->keepdims) key += 'k';
    if (!node->axes().empty()) append_list(key, 'a', node->axes());
    if (!node->steps().empty()) append_list(key, 'c', node->steps());
    for (const ir::NodePtr& input : node->inputs) {
      const ir::NodePositions::Entry* inside = nodes.find(input.get());
      key += inside != nodes.end() ? '%' : '@';
      append_number(key, inside != nodes.end() ? inside->second : inputs.at(input.get()));
    }
    key += ';';
  }
  key += "out";
  for (const ir::NodePtr& output : kernel.outputs) {
    key += ' ';
    append_number(key, nodes.at(output.get()));
  }
  if (sizes == Sizes::Runtime) append_size_choices(key, kernel);
  // Flat code serves every size, with its outputs streamed or not: the key says which.
  if (sizes == Sizes::Flat && cpu_streams_outputs(kernel)) key += ";stream";
  return key;
}

std::pair<Sizes, const std::string&> cpu_sizes_and_key(const Kernel& kernel, std::string& scratch) {
  if (KernelDescription* memo = kernel.description.get()) {
    std::call_once(memo->cpu_filled, [&] {
      memo->cpu_sizes = cpu_sizes(kernel);
      memo->cpu_key = kernel_key(kernel, memo->cpu_sizes);
    });
    return {memo->cpu_sizes, memo->cpu_key};
  }
  const Sizes sizes = cpu_sizes(kernel);
  scratch = kernel_key(kernel, sizes);
  return {sizes, scratch};
}

const std::string& cuda_key(const Kernel& kernel, std::string& scratch) {
  if (KernelDescription* memo = kernel.description.get()) {
    std::call_once(memo->cuda_filled,
                   [&] { memo->cuda_key = kernel_key(kernel, exact_sizes(kernel)); });
    return memo->cuda_key;
  }
  scratch = kernel_key(kernel, exact_sizes(kernel));
  return scratch;
}

int scalar_slot_count(const ir::Node& node) {
  switch (node.op) {
    case ir::Op::Full: return 1;
    case ir::Op::Arange: return 2;
    case ir::Op::RandomUniform:
    case ir::Op::RandomNormal: return 3;
    case ir::Op::Slice: return static_cast<int>(node.starts().size());
    default: return 0;
  }
}

std::vector<uint64_t> kernel_scalars(const Kernel& kernel, Sizes sizes) {
  std::vector<uint64_t> slots;
  for (const ir::NodePtr& node : kernel.nodes) {
    switch (node->op) {
      case ir::Op::Full: slots.push_back(element_bits(node->dtype, node->params[0])); break;
      case ir::Op::Arange:
        for (const ir::ScalarParam& param : node->params) {
          slots.push_back(is_floating(node->dtype) ? std::bit_cast<uint64_t>(param.floating)
                                                   : static_cast<uint64_t>(param.integer));
        }
        break;
      case ir::Op::RandomUniform:
      case ir::Op::RandomNormal:
        slots.push_back(node->seed);
        for (const ir::ScalarParam& param : node->params) {
          slots.push_back(std::bit_cast<uint64_t>(param.floating));
        }
        break;
      case ir::Op::Slice:
        for (int64_t start : node->starts()) slots.push_back(static_cast<uint64_t>(start));
        break;
      default: break;
    }
  }
  if (sizes == Sizes::Runtime) {
    for (int64_t extent : runtime_extents(kernel)) slots.push_back(static_cast<uint64_t>(extent));
  }
  return slots;
}

}  // namespace lz::plan
