#include "codegen/cuda/element_source.h"

#include "lazuli/error.h"

namespace lz::codegen::cuda {
namespace {

using ir::Op;

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
  switch (op) {
    case Op::Neg: return "(-(" + x + "))";
    case Op::Abs: return math_call(dtype, "fabs", x);
    case Op::Square: return "((" + x + ") * (" + x + "))";
    case Op::Sqrt: return math_call(dtype, "sqrt", x);
    case Op::Rsqrt: return "(" + std::string(one) + " / " + math_call(dtype, "sqrt", x) + ")";
    case Op::Exp: return math_call(dtype, "exp", x);
    case Op::Log: return math_call(dtype, "log", x);
    case Op::Sin: return math_call(dtype, "sin", x);
    case Op::Cos: return math_call(dtype, "cos", x);
    case Op::Tanh: return math_call(dtype, "tanh", x);
    case Op::Sigmoid:
      return "(" + std::string(one) + " / (" + one + " + " +
             math_call(dtype, "exp", "-(" + x + ")") + "))";
    case Op::Relu: {
      // NaN stays NaN.
      const char* zero = dtype == float32 ? "0.0f" : "0.0";
      return "((" + x + ") > " + zero + " || (" + x + ") != (" + x + ") ? (" + x + ") : " + zero +
             ")";
    }
    default: fail(op, dtype);
  }
}

std::string unary_integer(Op op, DType dtype, const std::string& x) {
  const std::string zero = dtype == int32 ? "0" : "(lz_i64)0";
  switch (op) {
    case Op::Neg: return reference_call("wrapping_sub", dtype, zero + ", " + x);
    case Op::Abs:
      return "((" + x + ") < 0 ? " + reference_call("wrapping_sub", dtype, zero + ", " + x) +
             " : (" + x + "))";
    case Op::Square: return reference_call("wrapping_mul", dtype, x + ", " + x);
    case Op::Relu: return "((" + x + ") > 0 ? (" + x + ") : " + zero + ")";
    default: fail(op, dtype);
  }
}

const char* comparison_operator(Op op) {
  switch (op) {
    case Op::Equal: return "==";
    case Op::NotEqual: return "!=";
    case Op::Less: return "<";
    case Op::LessEqual: return "<=";
    case Op::Greater: return ">";
    case Op::GreaterEqual: return ">=";
    default: return nullptr;
  }
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
  if (is_floating(dtype)) {
    // IEEE + - * / round once, as the interpreter's double computation rounded to float does;
    // NVRTC runs with --fmad=false, so nothing contracts into an FMA.
    switch (op) {
      case Op::Add: return "((" + x + ") + (" + y + "))";
      case Op::Sub: return "((" + x + ") - (" + y + "))";
      case Op::Mul: return "((" + x + ") * (" + y + "))";
      case Op::Div: return "((" + x + ") / (" + y + "))";
      case Op::Pow: return math_call(dtype, "pow", x + ", " + y);
      case Op::Maximum: return reference_call("nan_propagating_maximum", dtype, x + ", " + y);
      case Op::Minimum: return reference_call("nan_propagating_minimum", dtype, x + ", " + y);
      default: fail(op, dtype);
    }
  }
  if (is_integer(dtype)) {
    switch (op) {
      case Op::Add: return reference_call("wrapping_add", dtype, x + ", " + y);
      case Op::Sub: return reference_call("wrapping_sub", dtype, x + ", " + y);
      case Op::Mul: return reference_call("wrapping_mul", dtype, x + ", " + y);
      case Op::Pow: return reference_call("integer_pow", dtype, x + ", " + y);
      case Op::Maximum: return "((" + x + ") < (" + y + ") ? (" + y + ") : (" + x + "))";
      case Op::Minimum: return "((" + y + ") < (" + x + ") ? (" + y + ") : (" + x + "))";
      default: fail(op, dtype);
    }
  }
  switch (op) {
    case Op::Maximum: return "((" + x + ") || (" + y + "))";
    case Op::Minimum: return "((" + x + ") && (" + y + "))";
    default: fail(op, dtype);
  }
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
