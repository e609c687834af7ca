// float32 transcendentals emitted inline as branch-free LLVM IR, so that loops calling them
// vectorize. Accuracy against the correctly rounded result (tests/codegen/math_functions_test):
//   exp, log            <= 2 ulp over the whole range (1 measured), IEEE special values exact
//   sin, cos            <= 2 ulp for |x| < 2^49 (5.6e14), near their zeros too: the argument
//                          reduction is in float64 with pi/2 to 107 bits. Beyond, the result
//                          stays in [-1, 1] but is meaningless past 2^50.
//   tanh                <= 2 ulp (1 measured), odd including the sign of zero
//   sigmoid             <= 3 ulp, subnormal results included (built on exp in element_ops.cpp)
// float64 exp, log, sin, cos and pow (and float32 pow, computed in float64) vectorize through
// glibc's libmvec (<= 4 ulp) and call libm outside vector loops; float64 tanh calls libm.
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
