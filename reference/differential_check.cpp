#include "reference/differential_check.h"

#include <bit>
#include <cmath>
#include <new>
#include <sstream>
#include <type_traits>
#include <utility>
#include <vector>

#include "ir/node.h"
#include "ir/node_positions.h"
#include "ir/printer.h"
#include "lazuli/error.h"
#include "reference/counter_rng.h"

namespace lz::reference {
namespace {

template <class T>
void fill_elements(memory::Buffer& buffer, uint64_t stream) {
  T* out = buffer.data_as<T>();
  for (int64_t i = 0; i < buffer.size(); ++i) {
    const auto counter = static_cast<uint64_t>(i);
    if constexpr (std::is_same_v<T, bool>) {
      out[i] = (std::popcount(random_bits(stream, counter)) & 1) != 0;
    } else if constexpr (std::is_floating_point_v<T>) {
      out[i] = static_cast<T>(uniform_element(stream, counter, -2.0, 2.0));
    } else {
      out[i] = static_cast<T>(std::floor(uniform_element(stream, counter, -5.0, 5.0)));
    }
  }
}

/// Whether `optimized` matches `reference` within the tolerance of T, or of float32 when
/// `float32_rounding` (see compare_buffers).
template <class T>
bool element_agrees(T reference, T optimized, bool float32_rounding) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(reference) || std::isnan(optimized)) {
      return std::isnan(reference) && std::isnan(optimized);
    }
    if (reference == optimized) return true;  // includes equal infinities
    const bool single = std::is_same_v<T, float> || float32_rounding;
    const double rtol = single ? 1e-5 : 1e-12;
    const double atol = single ? 1e-6 : 1e-12;
    const double difference = std::abs(static_cast<double>(reference) - optimized);
    return difference <= atol + rtol * std::abs(static_cast<double>(reference));
  } else {
    return reference == optimized;
  }
}

std::string index_text(int64_t flat, const Shape& shape) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] == 0) continue;
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  std::string text = "[";
  for (size_t d = 0; d < index.size(); ++d) text += (d ? "," : "") + std::to_string(index[d]);
  return text + "]";
}

template <class T>
std::string value_text(T value) {
  std::ostringstream text;
  if constexpr (std::is_same_v<T, bool>) {
    text << (value ? "true" : "false");
  } else {
    text.precision(std::is_same_v<T, float> ? 9 : 17);
    text << value;
  }
  return text.str();
}

template <class T>
std::string compare_elements(const memory::Buffer& reference, const memory::Buffer& optimized,
                             const Shape& shape, bool float32_rounding) {
  const T* expected = reference.data_as<T>();
  const T* actual = optimized.data_as<T>();
  int64_t differing = 0;
  int64_t first = -1;
  for (int64_t i = 0; i < reference.size(); ++i) {
    if (element_agrees(expected[i], actual[i], float32_rounding)) continue;
    if (first < 0) first = i;
    ++differing;
  }
  if (differing == 0) return "";
  return std::to_string(differing) + " of " + std::to_string(reference.size()) +
         " elements differ; first at " + index_text(first, shape) + ": reference " +
         value_text(expected[first]) + ", optimized " + value_text(actual[first]);
}

}  // namespace

void fill_data_leaves(const ir::Graph& graph, uint64_t seed) {
  for (size_t position = 0; position < graph.nodes.size(); ++position) {
    ir::Node& node = *graph.nodes[position];
    if (node.op != ir::Op::Data || node.buffer != nullptr) continue;
    std::shared_ptr<memory::Buffer> buffer;
    try {
      buffer = memory::Buffer::allocate(node.dtype, node.size());
    } catch (const std::bad_alloc&) {
      throw Error("[run] the data leaf %" + std::to_string(position) + " of " +
                  ir::type_text(node.dtype, node.shape) + " (" + std::to_string(node.size()) +
                  " elements) does not fit in memory; give it a smaller shape");
    }
    const uint64_t stream = random_bits(seed, position);
    switch (node.dtype) {
      case DType::Float32: fill_elements<float>(*buffer, stream); break;
      case DType::Float64: fill_elements<double>(*buffer, stream); break;
      case DType::Int32: fill_elements<int32_t>(*buffer, stream); break;
      case DType::Int64: fill_elements<int64_t>(*buffer, stream); break;
      case DType::Bool: fill_elements<bool>(*buffer, stream); break;
    }
    node.buffer = std::move(buffer);
  }
}

Precision precision_of(const ir::Node& output) {
  std::vector<const ir::Node*> pending{&output};
  ir::NodePositions seen;
  seen.add(&output);
  while (!pending.empty()) {
    const ir::Node* node = pending.back();
    pending.pop_back();
    if (node->dtype == float32) return Precision::Float32;
    if (node->is_evaluated()) continue;
    for (const ir::NodePtr& input : node->inputs) {
      if (seen.add(input.get())) pending.push_back(input.get());
    }
  }
  return Precision::OfDtype;
}

std::string compare_buffers(const memory::Buffer* reference, const memory::Buffer* optimized,
                            const Shape& shape, Precision precision) {
  const bool float32_rounding = precision == Precision::Float32;
  if (reference == nullptr) return "the reference produced no buffer";
  if (optimized == nullptr) return "the optimized run produced no buffer";
  if (optimized->dtype() != reference->dtype() || optimized->size() != reference->size()) {
    return std::string("the optimized buffer holds ") + std::to_string(optimized->size()) + " " +
           dtype_name(optimized->dtype()) + " elements, the reference " +
           std::to_string(reference->size()) + " " + dtype_name(reference->dtype());
  }
  switch (reference->dtype()) {
    case DType::Float32:
      return compare_elements<float>(*reference, *optimized, shape, float32_rounding);
    case DType::Float64:
      return compare_elements<double>(*reference, *optimized, shape, float32_rounding);
    case DType::Int32:
      return compare_elements<int32_t>(*reference, *optimized, shape, float32_rounding);
    case DType::Int64:
      return compare_elements<int64_t>(*reference, *optimized, shape, float32_rounding);
    case DType::Bool:
      return compare_elements<bool>(*reference, *optimized, shape, float32_rounding);
  }
  return "unknown dtype";
}

}  // namespace lz::reference
