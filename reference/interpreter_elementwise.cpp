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
  using ir::UnaryOp;
  switch (*ir::as_unary(node.op)) {
    case UnaryOp::Exp: return in_double([](double v) { return std::exp(v); });
    case UnaryOp::Log: return in_double([](double v) { return std::log(v); });
    case UnaryOp::Sqrt: return in_double([](double v) { return std::sqrt(v); });
    case UnaryOp::Rsqrt: return in_double([](double v) { return 1.0 / std::sqrt(v); });
    case UnaryOp::Sin: return in_double([](double v) { return std::sin(v); });
    case UnaryOp::Cos: return in_double([](double v) { return std::cos(v); });
    case UnaryOp::Tanh: return in_double([](double v) { return std::tanh(v); });
    case UnaryOp::Sigmoid: return in_double([](double v) { return 1.0 / (1.0 + std::exp(-v)); });
    case UnaryOp::Neg: return map_elements(x, out, size, [](T v) { return -v; });
    case UnaryOp::Abs: return map_elements(x, out, size, [](T v) { return std::abs(v); });
    case UnaryOp::Square: return map_elements(x, out, size, [](T v) { return v * v; });
    case UnaryOp::Relu:
      return map_elements(x, out, size, [](T v) { return std::isnan(v) || v > 0 ? v : T{0}; });
    case UnaryOp::Astype: break;  // interpret_unary converts
  }
  fail_unsupported_dtype(node, node.inputs[0]->dtype);
}

template <class T>
void unary_integer(const ir::Node& node, const T* x, T* out, int64_t size) {
  using ir::UnaryOp;
  switch (*ir::as_unary(node.op)) {
    case UnaryOp::Neg: return map_elements(x, out, size, [](T v) { return wrapping_sub(T{0}, v); });
    case UnaryOp::Abs:
      return map_elements(x, out, size, [](T v) { return v < 0 ? wrapping_sub(T{0}, v) : v; });
    case UnaryOp::Square: return map_elements(x, out, size, [](T v) { return wrapping_mul(v, v); });
    case UnaryOp::Relu: return map_elements(x, out, size, [](T v) { return v > 0 ? v : T{0}; });
    // Recording computes integers in float32 (DTypeRule::Floating); astype converts.
    case UnaryOp::Exp:
    case UnaryOp::Log:
    case UnaryOp::Sqrt:
    case UnaryOp::Rsqrt:
    case UnaryOp::Sin:
    case UnaryOp::Cos:
    case UnaryOp::Tanh:
    case UnaryOp::Sigmoid:
    case UnaryOp::Astype: break;
  }
  fail_unsupported_dtype(node, node.inputs[0]->dtype);
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
  using ir::BinaryOp;
  switch (*ir::as_binary(node.op)) {
    case BinaryOp::Add:
      if constexpr (kIsFloating<T>) {  // computed in double, rounded once to T
        return run([](T x, T y) { return static_cast<T>(double{x} + double{y}); });
      } else if constexpr (kIsInteger<T>) {
        return run(wrapping_add<T>);
      }
      break;
    case BinaryOp::Sub:
      if constexpr (kIsFloating<T>) {
        return run([](T x, T y) { return static_cast<T>(double{x} - double{y}); });
      } else if constexpr (kIsInteger<T>) {
        return run(wrapping_sub<T>);
      }
      break;
    case BinaryOp::Mul:
      if constexpr (kIsFloating<T>) {
        return run([](T x, T y) { return static_cast<T>(double{x} * double{y}); });
      } else if constexpr (kIsInteger<T>) {
        return run(wrapping_mul<T>);
      }
      break;
    case BinaryOp::Div:  // integers are divided in float32 (DTypeRule::Floating)
      if constexpr (kIsFloating<T>) {
        return run([](T x, T y) { return static_cast<T>(double{x} / double{y}); });
      }
      break;
    case BinaryOp::Pow:
      if constexpr (kIsFloating<T>) {
        return run([](T x, T y) { return static_cast<T>(std::pow(double{x}, double{y})); });
      } else if constexpr (kIsInteger<T>) {
        return run(integer_pow<T>);
      }
      break;
    case BinaryOp::Maximum:
      if constexpr (kIsFloating<T>) {
        return run(nan_propagating_maximum<T>);
      } else if constexpr (kIsInteger<T>) {
        return run([](T x, T y) { return std::max(x, y); });
      } else {
        return run([](bool x, bool y) { return x || y; });
      }
    case BinaryOp::Minimum:
      if constexpr (kIsFloating<T>) {
        return run(nan_propagating_minimum<T>);
      } else if constexpr (kIsInteger<T>) {
        return run([](T x, T y) { return std::min(x, y); });
      } else {
        return run([](bool x, bool y) { return x && y; });
      }
    case BinaryOp::Equal:
    case BinaryOp::NotEqual:
    case BinaryOp::Less:
    case BinaryOp::LessEqual:
    case BinaryOp::Greater:
    case BinaryOp::GreaterEqual: break;  // bool results: comparison()
  }
  fail_unsupported_dtype(node, node.inputs[0]->dtype);
}

/// IEEE comparisons: any comparison with NaN is false, except not_equal.
template <class T>
void comparison(const ir::Node& node, const T* a, const T* b, bool* out) {
  const auto run = [&](auto function) { broadcast_binary(node, a, b, out, function); };
  using ir::BinaryOp;
  switch (*ir::as_binary(node.op)) {
    case BinaryOp::Equal: return run([](T x, T y) { return x == y; });
    case BinaryOp::NotEqual: return run([](T x, T y) { return x != y; });
    case BinaryOp::Less: return run([](T x, T y) { return x < y; });
    case BinaryOp::LessEqual: return run([](T x, T y) { return x <= y; });
    case BinaryOp::Greater: return run([](T x, T y) { return x > y; });
    case BinaryOp::GreaterEqual: return run([](T x, T y) { return x >= y; });
    case BinaryOp::Add:
    case BinaryOp::Sub:
    case BinaryOp::Mul:
    case BinaryOp::Div:
    case BinaryOp::Pow:
    case BinaryOp::Maximum:
    case BinaryOp::Minimum: break;  // results of the operands' dtype: arithmetic()
  }
  fail_unsupported_dtype(node, node.inputs[0]->dtype);
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
