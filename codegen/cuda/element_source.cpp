#include "codegen/cuda/element_source.h"

#include "lazuli/error.h"

namespace lz::codegen::cuda {
namespace {

using ir::BinaryOp;
using ir::Op;
using ir::UnaryOp;

[[noreturn]] void fail(Op op, DType dtype) {
  throw Error("[" + std::string(ir::op_name(op)) + "] the CUDA code generator has no " +
              dtype_name(dtype) + " form (the IR's type rules should have rejected it)");
}

/// A libdevice function of x in the precision of `dtype`: expf for float32, exp for float64.
/// float32 stays in float32, as the CPU backend's single-precision polynomials do: a round trip
/// through double costs the GPU's slower float64 units for a result that agrees within 2 ulp
/// (CUDA's documented bound for these functions without --use_fast_math).
std::string math_call(DType dtype, const std::string& function, const std::string& x) {
  return function + (dtype == float32 ? "f(" : "(") + x + ")";
}

std::string unary_floating(Op op, DType dtype, const std::string& x) {
  const char* one = dtype == float32 ? "1.0f" : "1.0";
  switch (*ir::as_unary(op)) {
    case UnaryOp::Neg: return "(-(" + x + "))";
    case UnaryOp::Abs: return math_call(dtype, "fabs", x);
    case UnaryOp::Square: return "((" + x + ") * (" + x + "))";
    case UnaryOp::Sqrt: return math_call(dtype, "sqrt", x);
    case UnaryOp::Rsqrt: return "(" + std::string(one) + " / " + math_call(dtype, "sqrt", x) + ")";
    case UnaryOp::Exp: return math_call(dtype, "exp", x);
    case UnaryOp::Log: return math_call(dtype, "log", x);
    case UnaryOp::Sin: return math_call(dtype, "sin", x);
    case UnaryOp::Cos: return math_call(dtype, "cos", x);
    case UnaryOp::Tanh: return math_call(dtype, "tanh", x);
    case UnaryOp::Sigmoid:
      return "(" + std::string(one) + " / (" + one + " + " +
             math_call(dtype, "exp", "-(" + x + ")") + "))";
    case UnaryOp::Relu: {
      // NaN stays NaN.
      const char* zero = dtype == float32 ? "0.0f" : "0.0";
      return "((" + x + ") > " + zero + " || (" + x + ") != (" + x + ") ? (" + x + ") : " + zero +
             ")";
    }
    case UnaryOp::Astype: break;  // cast_expression converts
  }
  fail(op, dtype);
}

std::string unary_integer(Op op, DType dtype, const std::string& x) {
  const std::string zero = dtype == int32 ? "0" : "(lz_i64)0";
  switch (*ir::as_unary(op)) {
    case UnaryOp::Neg: return reference_call("wrapping_sub", dtype, zero + ", " + x);
    case UnaryOp::Abs:
      return "((" + x + ") < 0 ? " + reference_call("wrapping_sub", dtype, zero + ", " + x) +
             " : (" + x + "))";
    case UnaryOp::Square: return reference_call("wrapping_mul", dtype, x + ", " + x);
    case UnaryOp::Relu: return "((" + x + ") > 0 ? (" + x + ") : " + zero + ")";
    // Recording computes integers in float32 (DTypeRule::Floating); cast_expression converts.
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
  fail(op, dtype);
}

/// The C++ operator of a comparison; nullptr for the arithmetic ops.
const char* comparison_operator(Op op) {
  switch (*ir::as_binary(op)) {
    case BinaryOp::Equal: return "==";
    case BinaryOp::NotEqual: return "!=";
    case BinaryOp::Less: return "<";
    case BinaryOp::LessEqual: return "<=";
    case BinaryOp::Greater: return ">";
    case BinaryOp::GreaterEqual: return ">=";
    case BinaryOp::Add:
    case BinaryOp::Sub:
    case BinaryOp::Mul:
    case BinaryOp::Div:
    case BinaryOp::Pow:
    case BinaryOp::Maximum:
    case BinaryOp::Minimum: return nullptr;
  }
  return nullptr;
}

/// The arithmetic binary ops (not comparisons) in `dtype`. Floating + - * / round once, as the
/// interpreter's double computation rounded to float does; NVRTC runs with --fmad=false, so
/// nothing contracts into an FMA.
std::string arithmetic(Op op, DType dtype, const std::string& x, const std::string& y) {
  const bool floating = is_floating(dtype);
  const bool integer = is_integer(dtype);
  switch (*ir::as_binary(op)) {
    case BinaryOp::Add:
      if (floating) return "((" + x + ") + (" + y + "))";
      if (integer) return reference_call("wrapping_add", dtype, x + ", " + y);
      break;
    case BinaryOp::Sub:
      if (floating) return "((" + x + ") - (" + y + "))";
      if (integer) return reference_call("wrapping_sub", dtype, x + ", " + y);
      break;
    case BinaryOp::Mul:
      if (floating) return "((" + x + ") * (" + y + "))";
      if (integer) return reference_call("wrapping_mul", dtype, x + ", " + y);
      break;
    case BinaryOp::Div:  // integers are divided in float32 (DTypeRule::Floating)
      if (floating) return "((" + x + ") / (" + y + "))";
      break;
    case BinaryOp::Pow:
      if (floating) return math_call(dtype, "pow", x + ", " + y);
      if (integer) return reference_call("integer_pow", dtype, x + ", " + y);
      break;
    case BinaryOp::Maximum:
      if (floating) return reference_call("nan_propagating_maximum", dtype, x + ", " + y);
      if (integer) return "((" + x + ") < (" + y + ") ? (" + y + ") : (" + x + "))";
      return "((" + x + ") || (" + y + "))";
    case BinaryOp::Minimum:
      if (floating) return reference_call("nan_propagating_minimum", dtype, x + ", " + y);
      if (integer) return "((" + y + ") < (" + x + ") ? (" + y + ") : (" + x + "))";
      return "((" + x + ") && (" + y + "))";
    case BinaryOp::Equal:
    case BinaryOp::NotEqual:
    case BinaryOp::Less:
    case BinaryOp::LessEqual:
    case BinaryOp::Greater:
    case BinaryOp::GreaterEqual: break;  // comparison_operator
  }
  fail(op, dtype);
}

}  // namespace

const char* value_type(DType dtype) {
  switch (dtype) {
    case DType::Float32: return "float";
    case DType::Float64: return "double";
    case DType::Int32: return "int";
    case DType::Int64: return "lz_i64";
    case DType::Bool: return "bool";
  }
  return "void";
}

const char* storage_type(DType dtype) {
  return dtype == bool_ ? "lz_bool_storage" : value_type(dtype);
}

std::string reference_call(const char* function, DType dtype, const std::string& arguments) {
  return std::string("lz::reference::") + function + "<" + value_type(dtype) + ">(" + arguments +
         ")";
}

std::string cast_expression(DType from, DType to, const std::string& x) {
  if (from == to) return x;
  if (to == bool_) return "((" + x + ") != 0)";  // NaN != 0, so NaN becomes true
  if (is_floating(from) && is_integer(to)) {
    return reference_call("saturating_float_to_integer", to, "(double)(" + x + ")");
  }
  // int -> int wraps (two's complement), bool -> 0 or 1, to float rounds to nearest.
  return "(" + std::string(value_type(to)) + ")(" + x + ")";
}

std::string unary_expression(Op op, DType dtype, const std::string& x) {
  if (is_floating(dtype)) return unary_floating(op, dtype, x);
  if (is_integer(dtype)) return unary_integer(op, dtype, x);
  fail(op, dtype);
}

std::string binary_expression(Op op, DType dtype, const std::string& x, const std::string& y) {
  if (const char* comparison = comparison_operator(op)) {
    return "((" + x + ") " + comparison + " (" + y + "))";
  }
  return arithmetic(op, dtype, x, y);
}

std::string extremum_identity(DType dtype, bool lowest) {
  switch (dtype) {
    case DType::Float32: return lowest ? "(-lz_inf_f32())" : "lz_inf_f32()";
    case DType::Float64: return lowest ? "(-lz_inf_f64())" : "lz_inf_f64()";
    case DType::Int32: return lowest ? "(-2147483647 - 1)" : "2147483647";
    case DType::Int64: return lowest ? "(-9223372036854775807LL - 1)" : "9223372036854775807LL";
    case DType::Bool: return lowest ? "false" : "true";
  }
  return "0";
}

}  // namespace lz::codegen::cuda
