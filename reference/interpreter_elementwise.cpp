// Elementwise ops: unary math, astype, binary arithmetic and comparisons, where.
//
// Floating math is computed in double and rounded once to the result dtype; for + - * / and sqrt
// that equals computing in float32 directly. Integer arithmetic wraps (two's complement).
#include <algorithm>
#include <cmath>

#include "reference/interpreter_internal.h"

namespace lz::reference::detail {
namespace {

// ---------------------------------------------------------------------------------------------
// Unary

template <class T, class F>
void map_elements(const T* x, T* out, int64_t size, F function) {
  for (int64_t i = 0; i < size; ++i) out[i] = function(x[i]);
}

template <class T>
void unary_floating(const ir::Node& node, const T* x, T* out, int64_t size) {
  // Applies a double -> double function and rounds the result to T.
  const auto in_double = [&](double (*function)(double)) {
    map_elements(x, out, size, [function](T value) {
      return static_cast<T>(function(static_cast<double>(value)));
    });
  };
  switch (node.op) {
    case ir::Op::Exp: return in_double([](double v) { return std::exp(v); });
    case ir::Op::Log: return in_double([](double v) { return std::log(v); });
    case ir::Op::Sqrt: return in_double([](double v) { return std::sqrt(v); });
    case ir::Op::Rsqrt: return in_double([](double v) { return 1.0 / std::sqrt(v); });
    case ir::Op::Sin: return in_double([](double v) { return std::sin(v); });
    case ir::Op::Cos: return in_double([](double v) { return std::cos(v); });
    case ir::Op::Tanh: return in_double([](double v) { return std::tanh(v); });
    case ir::Op::Sigmoid: return in_double([](double v) { return 1.0 / (1.0 + std::exp(-v)); });
    case ir::Op::Neg: return map_elements(x, out, size, [](T v) { return -v; });
    case ir::Op::Abs: return map_elements(x, out, size, [](T v) { return std::abs(v); });
    case ir::Op::Square: return map_elements(x, out, size, [](T v) { return v * v; });
    case ir::Op::Relu:
      return map_elements(x, out, size, [](T v) { return std::isnan(v) || v > 0 ? v : T{0}; });
    default: fail_unsupported_dtype(node, node.inputs[0]->dtype);
  }
}

template <class T>
void unary_integer(const ir::Node& node, const T* x, T* out, int64_t size) {
  switch (node.op) {
    case ir::Op::Neg: return map_elements(x, out, size, [](T v) { return wrapping_sub(T{0}, v); });
    case ir::Op::Abs:
      return map_elements(x, out, size, [](T v) { return v < 0 ? wrapping_sub(T{0}, v) : v; });
    case ir::Op::Square: return map_elements(x, out, size, [](T v) { return wrapping_mul(v, v); });
    case ir::Op::Relu: return map_elements(x, out, size, [](T v) { return v > 0 ? v : T{0}; });
    default: fail_unsupported_dtype(node, node.inputs[0]->dtype);
  }
}

void astype(const ir::Node& node, const memory::Buffer& x, memory::Buffer& out) {
  visit_dtype(x.dtype(), [&]<class From>(std::type_identity<From>) {
    visit_dtype(node.dtype, [&]<class To>(std::type_identity<To>) {
      const From* in = x.data_as<From>();
      To* result = out.data_as<To>();
      for (int64_t i = 0; i < out.size(); ++i) result[i] = convert_element<To>(in[i]);
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Binary

/// out[i] = function(a[...], b[...]) with a and b broadcast (numpy rules) to the node's shape.
template <class In, class Out, class F>
void broadcast_binary(const ir::Node& node, const In* a, const In* b, Out* out, F function) {
  const Shape& a_shape = node.inputs[0]->shape;
  const Shape& b_shape = node.inputs[1]->shape;
  if (a_shape == node.shape && b_shape == node.shape) {
    for (int64_t i = 0; i < node.size(); ++i) out[i] = function(a[i], b[i]);
    return;
  }
  const std::vector<int64_t> a_strides = broadcast_strides(a_shape, node.shape);
  const std::vector<int64_t> b_strides = broadcast_strides(b_shape, node.shape);
  walk_strided<2>(node.shape, {a_strides.data(), b_strides.data()}, {0, 0},
                  [&](int64_t i, const std::array<int64_t, 2>& offset) {
                    out[i] = function(a[offset[0]], b[offset[1]]);
                  });
}

template <class T>
void arithmetic(const ir::Node& node, const T* a, const T* b, T* out) {
  const auto run = [&](auto function) { broadcast_binary(node, a, b, out, function); };
  if constexpr (kIsFloating<T>) {
    // Computed in double, rounded once to T.
    switch (node.op) {
      case ir::Op::Add: return run([](T x, T y) { return static_cast<T>(double{x} + double{y}); });
      case ir::Op::Sub: return run([](T x, T y) { return static_cast<T>(double{x} - double{y}); });
      case ir::Op::Mul: return run([](T x, T y) { return static_cast<T>(double{x} * double{y}); });
      case ir::Op::Div: return run([](T x, T y) { return static_cast<T>(double{x} / double{y}); });
      case ir::Op::Pow:
        return run([](T x, T y) { return static_cast<T>(std::pow(double{x}, double{y})); });
      case ir::Op::Maximum: return run(nan_propagating_maximum<T>);
      case ir::Op::Minimum: return run(nan_propagating_minimum<T>);
      default: break;
    }
  } else if constexpr (kIsInteger<T>) {
    switch (node.op) {
      case ir::Op::Add: return run(wrapping_add<T>);
      case ir::Op::Sub: return run(wrapping_sub<T>);
      case ir::Op::Mul: return run(wrapping_mul<T>);
      case ir::Op::Pow: return run(integer_pow<T>);
      case ir::Op::Maximum: return run([](T x, T y) { return std::max(x, y); });
      case ir::Op::Minimum: return run([](T x, T y) { return std::min(x, y); });
      default: break;
    }
  } else {
    switch (node.op) {
      case ir::Op::Maximum: return run([](bool x, bool y) { return x || y; });
      case ir::Op::Minimum: return run([](bool x, bool y) { return x && y; });
      default: break;
    }
  }
  fail_unsupported_dtype(node, node.inputs[0]->dtype);
}

/// IEEE comparisons: any comparison with NaN is false, except not_equal.
template <class T>
void comparison(const ir::Node& node, const T* a, const T* b, bool* out) {
  const auto run = [&](auto function) { broadcast_binary(node, a, b, out, function); };
  switch (node.op) {
    case ir::Op::Equal: return run([](T x, T y) { return x == y; });
    case ir::Op::NotEqual: return run([](T x, T y) { return x != y; });
    case ir::Op::Less: return run([](T x, T y) { return x < y; });
    case ir::Op::LessEqual: return run([](T x, T y) { return x <= y; });
    case ir::Op::Greater: return run([](T x, T y) { return x > y; });
    case ir::Op::GreaterEqual: return run([](T x, T y) { return x >= y; });
    default: fail_unsupported_dtype(node, node.inputs[0]->dtype);
  }
}

}  // namespace

void interpret_unary(const ir::Node& node, const memory::Buffer& x, memory::Buffer& out) {
  if (node.op == ir::Op::Astype) return astype(node, x, out);
  visit_dtype(x.dtype(), [&]<class T>(std::type_identity<T>) {
    if constexpr (kIsFloating<T>) {
      unary_floating(node, x.data_as<T>(), out.data_as<T>(), out.size());
    } else if constexpr (kIsInteger<T>) {
      unary_integer(node, x.data_as<T>(), out.data_as<T>(), out.size());
    } else {
      fail_unsupported_dtype(node, x.dtype());
    }
  });
}

void interpret_binary(const ir::Node& node, const memory::Buffer& a, const memory::Buffer& b,
                      memory::Buffer& out) {
  visit_dtype(a.dtype(), [&]<class T>(std::type_identity<T>) {
    if (ir::is_comparison(node.op)) {
      comparison(node, a.data_as<T>(), b.data_as<T>(), out.data_as<bool>());
    } else {
      arithmetic(node, a.data_as<T>(), b.data_as<T>(), out.data_as<T>());
    }
  });
}

void interpret_where(const ir::Node& node, const memory::Buffer& cond, const memory::Buffer& a,
                     const memory::Buffer& b, memory::Buffer& out) {
  const std::vector<int64_t> cond_strides = broadcast_strides(node.inputs[0]->shape, node.shape);
  const std::vector<int64_t> a_strides = broadcast_strides(node.inputs[1]->shape, node.shape);
  const std::vector<int64_t> b_strides = broadcast_strides(node.inputs[2]->shape, node.shape);
  visit_dtype(node.dtype, [&]<class T>(std::type_identity<T>) {
    const bool* condition = cond.data_as<bool>();
    const T* if_true = a.data_as<T>();
    const T* if_false = b.data_as<T>();
    T* result = out.data_as<T>();
    walk_strided<3>(node.shape, {cond_strides.data(), a_strides.data(), b_strides.data()},
                    {0, 0, 0}, [&](int64_t i, const std::array<int64_t, 3>& offset) {
                      result[i] = condition[offset[0]] ? if_true[offset[1]] : if_false[offset[2]];
                    });
  });
}

}  // namespace lz::reference::detail
