// float32 transcendentals emitted inline as branch-free LLVM IR, so that loops calling them
// vectorize. Accuracy against the correctly rounded result (tests/codegen/math_functions_test):
//   exp, log            <= 2 ulp over the whole range, IEEE special values exact
//   sin, cos            <= 2 ulp relative, or 1e-7 absolute near zeros, for |x| < 1e6
//                          (argument reduction in float64; beyond 1e6 accuracy degrades)
//   tanh                <= 3 ulp
// float64 transcendentals call libm instead (scalar, exactly the interpreter's values).
#pragma once

namespace llvm {
class Value;
class IRBuilderBase;
}  // namespace llvm

namespace lz::codegen {

llvm::Value* emit_exp_f32(llvm::IRBuilderBase& builder, llvm::Value* x);
llvm::Value* emit_log_f32(llvm::IRBuilderBase& builder, llvm::Value* x);
llvm::Value* emit_sin_f32(llvm::IRBuilderBase& builder, llvm::Value* x);
llvm::Value* emit_cos_f32(llvm::IRBuilderBase& builder, llvm::Value* x);
llvm::Value* emit_tanh_f32(llvm::IRBuilderBase& builder, llvm::Value* x);

}  // namespace lz::codegen
