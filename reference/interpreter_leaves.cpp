// Leaves that generate their values: full, arange, random_uniform, random_normal.
#include <cmath>

#include "reference/counter_rng.h"
#include "reference/interpreter_internal.h"

namespace lz::reference::detail {
namespace {

template <class T>
void fill(const ir::Node& node, T* out) {
  const ir::ScalarParam& value = node.params[0];
  T element;
  if constexpr (kIsFloating<T>) {
    element = static_cast<T>(value.floating);
  } else if constexpr (std::is_same_v<T, bool>) {
    element = value.integer != 0;
  } else {
    element = static_cast<T>(value.integer);  // int64 -> int32 wraps
  }
  for (int64_t i = 0; i < node.size(); ++i) out[i] = element;
}

template <class T>
void arange(const ir::Node& node, T* out) {
  if constexpr (kIsFloating<T>) {
    const double start = node.params[0].floating;
    const double step = node.params[1].floating;
    for (int64_t i = 0; i < node.size(); ++i) {
      out[i] = static_cast<T>(start + static_cast<double>(i) * step);
    }
  } else if constexpr (kIsInteger<T>) {
    const int64_t start = node.params[0].integer;
    const int64_t step = node.params[1].integer;
    for (int64_t i = 0; i < node.size(); ++i) {
      out[i] = static_cast<T>(wrapping_add(start, wrapping_mul(i, step)));
    }
  } else {
    fail_unsupported_dtype(node, node.dtype);
  }
}

template <class T>
void random_uniform(const ir::Node& node, T* out) {
  if constexpr (std::is_same_v<T, bool>) {
    fail_unsupported_dtype(node, node.dtype);
  } else {
    const double low = node.params[0].floating;
    const double high = node.params[1].floating;
    for (int64_t i = 0; i < node.size(); ++i) {
      out[i] = uniform_element_as<T>(node.seed, static_cast<uint64_t>(i), low, high);
    }
  }
}

template <class T>
void random_normal(const ir::Node& node, T* out) {
  if constexpr (kIsFloating<T>) {
    const double mean = node.params[0].floating;
    const double std = node.params[1].floating;
    for (int64_t i = 0; i < node.size(); ++i) {
      out[i] = normal_element_as<T>(node.seed, static_cast<uint64_t>(i), mean, std);
    }
  } else {
    fail_unsupported_dtype(node, node.dtype);
  }
}

}  // namespace

void interpret_leaf(const ir::Node& node, memory::Buffer& out) {
  visit_dtype(node.dtype, [&]<class T>(std::type_identity<T>) {
    T* values = out.data_as<T>();
    switch (node.op) {
      case ir::Op::Full: fill(node, values); break;
      case ir::Op::Arange: arange(node, values); break;
      case ir::Op::RandomUniform: random_uniform(node, values); break;
      case ir::Op::RandomNormal: random_normal(node, values); break;
      default: fail_unsupported_dtype(node, node.dtype);
    }
  });
}

}  // namespace lz::reference::detail
