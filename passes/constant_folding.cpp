#include "passes/constant_folding.h"

#include <cmath>
#include <memory>
#include <new>
#include <vector>

#include "lazuli/error.h"
#include "memory/buffer.h"
#include "reference/interpreter.h"

namespace lz::passes::detail {
namespace {

/// The single element of `buffer` in the form a `full` of that dtype takes as its value.
ir::ScalarParam element_of(const memory::Buffer& buffer) {
  switch (buffer.dtype()) {
    case DType::Float32: return ir::ScalarParam::of(static_cast<double>(*buffer.data_as<float>()));
    case DType::Float64: return ir::ScalarParam::of(*buffer.data_as<double>());
    case DType::Int32: return ir::ScalarParam::of_integer(*buffer.data_as<int32_t>());
    case DType::Int64: return ir::ScalarParam::of_integer(*buffer.data_as<int64_t>());
    case DType::Bool: break;
  }
  return ir::ScalarParam::of_integer(*buffer.data_as<bool>() ? 1 : 0);
}

/// A 0-d copy of a constant: folding works on one element, whatever the constants' shapes.
ir::NodePtr scalar_copy(const ir::Node& full) {
  auto copy = std::make_shared<ir::Node>();
  copy->op = ir::Op::Full;
  copy->dtype = full.dtype;
  copy->params[0] = full.params[0];
  return copy;
}

}  // namespace

bool is_constant(const ir::Node& node) { return node.op == ir::Op::Full && !node.is_evaluated(); }

ir::ScalarParam constant_value(const ir::Node& full) {
  // The element a `full` holds, converted as the interpreter's fill converts it; computed here
  // without a buffer because simplification asks for it for every constant it looks at.
  const ir::ScalarParam& value = full.params[0];
  switch (full.dtype) {
    case DType::Float32:
      return ir::ScalarParam::of(static_cast<double>(static_cast<float>(value.floating)));
    case DType::Float64: return ir::ScalarParam::of(value.floating);
    case DType::Int32: return ir::ScalarParam::of_integer(static_cast<int32_t>(value.integer));
    case DType::Int64: return ir::ScalarParam::of_integer(value.integer);
    case DType::Bool: break;
  }
  return ir::ScalarParam::of_integer(value.integer != 0 ? 1 : 0);
}

std::optional<ir::ScalarParam> fold_elementwise(const ir::Node& node) {
  // Elementwise ops compute each element from the inputs' elements at the same index alone, so
  // the value over constants of any shape is the value over their 0-d copies.
  ir::Node scalar;
  scalar.op = node.op;
  scalar.dtype = node.dtype;
  std::vector<std::shared_ptr<memory::Buffer>> buffers;
  std::vector<const memory::Buffer*> views;
  // Folding is an optimization: a value it cannot compute here (an op the interpreter rejects,
  // or no memory under LZ_MEMORY_LIMIT) is left for the kernel, which reports the failure at
  // the line that recorded the op.
  try {
    for (const ir::NodePtr& input : node.inputs) {
      scalar.inputs.push_back(scalar_copy(*input));
      buffers.push_back(reference::interpret_node(*scalar.inputs.back(), {}));
      views.push_back(buffers.back().get());
    }
    return element_of(*reference::interpret_node(scalar, views));
  } catch (const Error&) {
    return std::nullopt;
  } catch (const std::bad_alloc&) {
    return std::nullopt;
  }
}

void become_full(ir::Node& node, ir::ScalarParam value) {
  node.op = ir::Op::Full;
  node.inputs.clear();
  node.clear_attributes();
  node.params[0] = value;
}

bool constant_is_one(const ir::Node& node) {
  const ir::ScalarParam value = constant_value(node);
  return is_floating(node.dtype) ? value.floating == 1.0 : value.integer == 1;
}

bool constant_is_additive_identity(const ir::Node& node) {
  const ir::ScalarParam value = constant_value(node);
  if (!is_floating(node.dtype)) return value.integer == 0;
  return value.floating == 0 && std::signbit(value.floating);
}

bool constant_is_subtractive_identity(const ir::Node& node) {
  const ir::ScalarParam value = constant_value(node);
  if (!is_floating(node.dtype)) return value.integer == 0;
  return value.floating == 0 && !std::signbit(value.floating);
}

bool is_growing_power_of_two(double value) {
  if (!std::isfinite(value)) return false;
  int exponent = 0;
  const double mantissa = std::frexp(value, &exponent);
  return std::abs(mantissa) == 0.5 && exponent >= 1;
}

int64_t simplifier_class(const ir::Node& node) {
  const ir::ScalarParam value = constant_value(node);
  const bool floating = is_floating(node.dtype);
  return 1 + 2 * constant_is_one(node) + 4 * constant_is_additive_identity(node) +
         8 * constant_is_subtractive_identity(node) +
         16 * (floating && is_growing_power_of_two(value.floating)) +
         32 * (floating && std::isfinite(value.floating));
}

ir::NodePtr make_scalar_constant(DType dtype, ir::ScalarParam value,
                                 const std::source_location& location) {
  auto node = std::make_shared<ir::Node>();
  node->op = ir::Op::Full;
  node->dtype = dtype;
  node->params[0] = value;
  node->location = location;
  return node;
}

}  // namespace lz::passes::detail
