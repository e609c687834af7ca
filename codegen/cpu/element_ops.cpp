#include "codegen/cpu/element_ops.h"

#include <limits>
#include <vector>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Module.h>

#include "codegen/cpu/math_functions.h"
#include "lazuli/error.h"

namespace lz::codegen {
namespace {

using ir::BinaryOp;
using ir::Op;
using ir::UnaryOp;
using llvm::IRBuilderBase;
using llvm::Value;

[[noreturn]] void fail(Op op, DType dtype) {
  throw Error("[" + std::string(ir::op_name(op)) + "] the CPU code generator has no " +
              dtype_name(dtype) + " form (the IR's type rules should have rejected it)");
}

/// f(x) for a float64 intrinsic (llvm.exp, llvm.log, ...): the JIT maps it to libmvec's
/// vector functions inside vectorized loops and to libm elsewhere.
Value* float64_intrinsic(IRBuilderBase& b, llvm::Intrinsic::ID id, Value* x) {
  return b.CreateIntrinsic(id, {b.getDoubleTy()}, {x});
}

Value* unary_floating(IRBuilderBase& b, llvm::Module& module, Op op, DType dtype, Value* x) {
  llvm::Type* type = x->getType();
  const bool single = dtype == float32;
  const auto intrinsic = [&](llvm::Intrinsic::ID id) { return b.CreateIntrinsic(id, {type}, {x}); };
  switch (*ir::as_unary(op)) {
    case UnaryOp::Neg: return b.CreateFNeg(x);
    case UnaryOp::Abs: return intrinsic(llvm::Intrinsic::fabs);
    case UnaryOp::Square: return b.CreateFMul(x, x);
    case UnaryOp::Sqrt: return intrinsic(llvm::Intrinsic::sqrt);
    case UnaryOp::Rsqrt: {
      // In float64, then rounded once: the interpreter's value.
      Value* wide = single ? b.CreateFPExt(x, b.getDoubleTy()) : x;
      Value* root = b.CreateIntrinsic(llvm::Intrinsic::sqrt, {b.getDoubleTy()}, {wide});
      Value* result = b.CreateFDiv(llvm::ConstantFP::get(b.getDoubleTy(), 1.0), root);
      return single ? b.CreateFPTrunc(result, type) : result;
    }
    case UnaryOp::Relu: {
      // NaN stays NaN: "unordered or greater".
      Value* zero = llvm::ConstantFP::get(type, 0.0);
      return b.CreateSelect(b.CreateFCmpUGT(x, zero), x, zero);
    }
    case UnaryOp::Exp:
      return single ? emit_exp_f32(b, x) : float64_intrinsic(b, llvm::Intrinsic::exp, x);
    case UnaryOp::Log:
      return single ? emit_log_f32(b, x) : float64_intrinsic(b, llvm::Intrinsic::log, x);
    case UnaryOp::Sin:
      return single ? emit_sin_f32(b, x) : float64_intrinsic(b, llvm::Intrinsic::sin, x);
    case UnaryOp::Cos:
      return single ? emit_cos_f32(b, x) : float64_intrinsic(b, llvm::Intrinsic::cos, x);
    case UnaryOp::Tanh:
      // libmvec has no tanh: a scalar libm call.
      return single ? emit_tanh_f32(b, x)
                    : emit_runtime_call(b, module, "tanh", b.getDoubleTy(), {x});
    case UnaryOp::Sigmoid: {
      if (!single) {
        Value* one = llvm::ConstantFP::get(type, 1.0);
        Value* e = float64_intrinsic(b, llvm::Intrinsic::exp, b.CreateFNeg(x));
        return b.CreateFDiv(one, b.CreateFAdd(one, e));
      }
      // e = exp(-|x|) never overflows: 1 / (1 + e) for x >= 0, e / (1 + e) below, which keeps
      // the subnormal results of large negative x.
      Value* one = llvm::ConstantFP::get(type, 1.0);
      Value* e =
          emit_exp_f32(b, b.CreateFNeg(b.CreateIntrinsic(llvm::Intrinsic::fabs, {type}, {x})));
      Value* positive = b.CreateFDiv(one, b.CreateFAdd(one, e));
      return b.CreateSelect(b.CreateFCmpOLT(x, llvm::ConstantFP::get(type, 0.0)),
                            b.CreateFMul(e, positive), positive);
    }
    case UnaryOp::Astype: break;  // emit_cast converts
  }
  fail(op, dtype);
}

Value* unary_integer(IRBuilderBase& b, Op op, DType dtype, Value* x) {
  Value* zero = llvm::ConstantInt::get(x->getType(), 0);
  switch (*ir::as_unary(op)) {
    case UnaryOp::Neg: return b.CreateSub(zero, x);
    case UnaryOp::Abs: return b.CreateSelect(b.CreateICmpSLT(x, zero), b.CreateSub(zero, x), x);
    case UnaryOp::Square: return b.CreateMul(x, x);
    case UnaryOp::Relu: return b.CreateSelect(b.CreateICmpSGT(x, zero), x, zero);
    // Recording computes integers in float32 (DTypeRule::Floating); emit_cast converts.
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

/// numpy's maximum/minimum: a NaN operand (the first one) is the result. The ordered comparison
/// is false when either is a NaN, which picks y; a NaN x is picked over it.
Value* nan_propagating(IRBuilderBase& b, bool maximum, Value* x, Value* y) {
  Value* pick_x = maximum ? b.CreateFCmpOGE(x, y) : b.CreateFCmpOLE(x, y);
  return b.CreateSelect(b.CreateFCmpUNO(x, x), x, b.CreateSelect(pick_x, x, y));
}

Value* comparison(IRBuilderBase& b, Op op, DType dtype, Value* x, Value* y) {
  using P = llvm::CmpInst::Predicate;
  struct Predicates {
    P floating, integer, boolean;
  };
  Predicates p{};
  switch (*ir::as_binary(op)) {
    case BinaryOp::Equal: p = {P::FCMP_OEQ, P::ICMP_EQ, P::ICMP_EQ}; break;
    case BinaryOp::NotEqual: p = {P::FCMP_UNE, P::ICMP_NE, P::ICMP_NE}; break;
    case BinaryOp::Less: p = {P::FCMP_OLT, P::ICMP_SLT, P::ICMP_ULT}; break;
    case BinaryOp::LessEqual: p = {P::FCMP_OLE, P::ICMP_SLE, P::ICMP_ULE}; break;
    case BinaryOp::Greater: p = {P::FCMP_OGT, P::ICMP_SGT, P::ICMP_UGT}; break;
    case BinaryOp::GreaterEqual: p = {P::FCMP_OGE, P::ICMP_SGE, P::ICMP_UGE}; break;
    case BinaryOp::Add:
    case BinaryOp::Sub:
    case BinaryOp::Mul:
    case BinaryOp::Div:
    case BinaryOp::Pow:
    case BinaryOp::Maximum:
    case BinaryOp::Minimum: fail(op, dtype);  // not comparisons: emit_binary's arithmetic
  }
  if (is_floating(dtype)) return b.CreateFCmp(p.floating, x, y);
  return b.CreateICmp(dtype == bool_ ? p.boolean : p.integer, x, y);
}

/// The arithmetic binary ops (not comparisons) in `dtype`.
Value* arithmetic(IRBuilderBase& b, llvm::Module& module, Op op, DType dtype, Value* x, Value* y) {
  const bool floating = is_floating(dtype);
  const bool integer = is_integer(dtype);
  switch (*ir::as_binary(op)) {
    case BinaryOp::Add:
      if (floating) return b.CreateFAdd(x, y);
      if (integer) return b.CreateAdd(x, y);  // no nsw: integer arithmetic wraps
      break;
    case BinaryOp::Sub:
      if (floating) return b.CreateFSub(x, y);
      if (integer) return b.CreateSub(x, y);
      break;
    case BinaryOp::Mul:
      if (floating) return b.CreateFMul(x, y);
      if (integer) return b.CreateMul(x, y);
      break;
    case BinaryOp::Div:  // integers are divided in float32 (DTypeRule::Floating)
      if (floating) return b.CreateFDiv(x, y);
      break;
    case BinaryOp::Pow:
      if (floating) {
        const bool single = dtype == float32;
        Value* base = single ? b.CreateFPExt(x, b.getDoubleTy()) : x;
        Value* exponent = single ? b.CreateFPExt(y, b.getDoubleTy()) : y;
        Value* result =
            b.CreateIntrinsic(llvm::Intrinsic::pow, {b.getDoubleTy()}, {base, exponent});
        return single ? b.CreateFPTrunc(result, b.getFloatTy()) : result;
      }
      if (integer) {
        const std::string name = std::string("lz_integer_pow_") + dtype_short_name(dtype);
        return emit_runtime_call(b, module, name.c_str(), x->getType(), {x, y});
      }
      break;
    case BinaryOp::Maximum:
      if (floating) return nan_propagating(b, true, x, y);
      if (integer) return b.CreateSelect(b.CreateICmpSLT(x, y), y, x);
      return b.CreateOr(x, y);
    case BinaryOp::Minimum:
      if (floating) return nan_propagating(b, false, x, y);
      if (integer) return b.CreateSelect(b.CreateICmpSLT(y, x), y, x);
      return b.CreateAnd(x, y);
    case BinaryOp::Equal:
    case BinaryOp::NotEqual:
    case BinaryOp::Less:
    case BinaryOp::LessEqual:
    case BinaryOp::Greater:
    case BinaryOp::GreaterEqual: break;  // comparison()
  }
  fail(op, dtype);
}

}  // namespace

llvm::Type* value_type(llvm::LLVMContext& context, DType dtype) {
  switch (dtype) {
    case DType::Float32: return llvm::Type::getFloatTy(context);
    case DType::Float64: return llvm::Type::getDoubleTy(context);
    case DType::Int32: return llvm::Type::getInt32Ty(context);
    case DType::Int64: return llvm::Type::getInt64Ty(context);
    case DType::Bool: return llvm::Type::getInt1Ty(context);
  }
  return nullptr;
}

llvm::Type* storage_type(llvm::LLVMContext& context, DType dtype) {
  return dtype == bool_ ? llvm::Type::getInt8Ty(context) : value_type(context, dtype);
}

Value* from_storage(IRBuilderBase& b, DType dtype, Value* stored) {
  return dtype == bool_ ? b.CreateICmpNE(stored, b.getInt8(0)) : stored;
}

Value* to_storage(IRBuilderBase& b, DType dtype, Value* value) {
  return dtype == bool_ ? b.CreateZExt(value, b.getInt8Ty()) : value;
}

Value* emit_cast(IRBuilderBase& b, DType from, DType to, Value* x) {
  llvm::Type* target = value_type(b.getContext(), to);
  if (from == to) return x;
  if (to == bool_) {
    // NaN != 0, so NaN becomes true.
    if (is_floating(from)) return b.CreateFCmpUNE(x, llvm::ConstantFP::get(x->getType(), 0.0));
    return b.CreateICmpNE(x, llvm::ConstantInt::get(x->getType(), 0));
  }
  if (from == bool_) return is_floating(to) ? b.CreateUIToFP(x, target) : b.CreateZExt(x, target);
  if (is_floating(from) && is_floating(to)) {
    return to == float32 ? b.CreateFPTrunc(x, target) : b.CreateFPExt(x, target);
  }
  if (is_floating(from)) {
    // Truncation toward zero, saturating; NaN gives 0.
    return b.CreateIntrinsic(llvm::Intrinsic::fptosi_sat, {target, x->getType()}, {x});
  }
  if (is_floating(to)) return b.CreateSIToFP(x, target);
  return to == int32 ? b.CreateTrunc(x, target) : b.CreateSExt(x, target);
}

Value* emit_unary(IRBuilderBase& b, llvm::Module& module, Op op, DType dtype, Value* x) {
  if (is_floating(dtype)) return unary_floating(b, module, op, dtype, x);
  if (is_integer(dtype)) return unary_integer(b, op, dtype, x);
  fail(op, dtype);
}

Value* emit_binary(IRBuilderBase& b, llvm::Module& module, Op op, DType dtype, Value* x, Value* y) {
  if (ir::is_comparison(op)) return comparison(b, op, dtype, x, y);
  return arithmetic(b, module, op, dtype, x, y);
}

Value* emit_runtime_call(IRBuilderBase& b, llvm::Module& module, const char* name,
                         llvm::Type* result, std::initializer_list<Value*> arguments) {
  std::vector<llvm::Type*> parameter_types;
  for (Value* argument : arguments) parameter_types.push_back(argument->getType());
  llvm::FunctionCallee callee = module.getOrInsertFunction(
      name, llvm::FunctionType::get(result, parameter_types, /*isVarArg=*/false));
  if (auto* function = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
    // Pure functions of their arguments: hoistable out of loops, removable when unused.
    function->setDoesNotAccessMemory();
    function->setDoesNotThrow();
    function->setWillReturn();
  }
  return b.CreateCall(callee, arguments);
}

}  // namespace lz::codegen
