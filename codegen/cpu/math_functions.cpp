// Polynomial coefficients are Cephes' single-precision minimax fits (exp, log, sin, cos, tanh on
// their reduced ranges); range reduction and special values are handled with selects, never
// branches.
#include "codegen/cpu/math_functions.h"

#include <initializer_list>
#include <limits>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>

namespace lz::codegen {
namespace {

using llvm::IRBuilderBase;
using llvm::Value;

Value* f32(IRBuilderBase& b, double value) { return llvm::ConstantFP::get(b.getFloatTy(), value); }
Value* f64(IRBuilderBase& b, double value) { return llvm::ConstantFP::get(b.getDoubleTy(), value); }
Value* i32(IRBuilderBase& b, int32_t value) { return b.getInt32(static_cast<uint32_t>(value)); }

/// c[0] + x * (c[1] + x * (c[2] + ...)), by Horner's rule with fused multiply-adds.
Value* polynomial(IRBuilderBase& b, Value* x, std::initializer_list<double> coefficients) {
  llvm::Type* type = x->getType();
  const double* c = coefficients.begin();
  Value* result = llvm::ConstantFP::get(type, c[coefficients.size() - 1]);
  for (size_t i = coefficients.size() - 1; i-- > 0;) {
    result = b.CreateIntrinsic(llvm::Intrinsic::fma, {type},
                               {result, x, llvm::ConstantFP::get(type, c[i])});
  }
  return result;
}

Value* is_nan(IRBuilderBase& b, Value* x) { return b.CreateFCmpUNO(x, x); }

/// 2^n as a float for an integer n in [-126, 127].
Value* power_of_two(IRBuilderBase& b, Value* n) {
  return b.CreateBitCast(b.CreateShl(b.CreateAdd(n, i32(b, 127)), 23), b.getFloatTy());
}

/// sin(r) and cos(r) for |r| <= pi/4.
Value* sin_kernel(IRBuilderBase& b, Value* r) {
  Value* z = b.CreateFMul(r, r);
  Value* p = polynomial(b, z, {-1.6666654611e-1, 8.3321608736e-3, -1.9515295891e-4});
  return b.CreateIntrinsic(llvm::Intrinsic::fma, {b.getFloatTy()}, {b.CreateFMul(r, z), p, r});
}
Value* cos_kernel(IRBuilderBase& b, Value* r) {
  Value* z = b.CreateFMul(r, r);
  Value* p = polynomial(b, z, {4.166664568298827e-2, -1.388731625493765e-3, 2.443315711809948e-5});
  Value* head = b.CreateFSub(f32(b, 1.0), b.CreateFMul(f32(b, 0.5), z));
  return b.CreateIntrinsic(llvm::Intrinsic::fma, {b.getFloatTy()}, {b.CreateFMul(z, z), p, head});
}

/// sin (or cos when `cosine`) of x: x = j * pi/2 + r in float64, then the quadrant j mod 4
/// picks +-sin(r) or +-cos(r).
Value* sin_or_cos(IRBuilderBase& b, Value* x, bool cosine) {
  llvm::Type* f64_type = b.getDoubleTy();
  Value* wide = b.CreateFPExt(x, f64_type);
  Value* j = b.CreateIntrinsic(llvm::Intrinsic::rint, {f64_type},
                               {b.CreateFMul(wide, f64(b, 0.6366197723675814))});
  // pi/2 = kHigh + kLow + O(2^-107). The first fused multiply-add is exact (once j != 0, x and
  // j kHigh are multiples of 2^-52 and their difference is below 2); the second leaves an error
  // near j 2^-107. That keeps every float below 2^49 within 2 ulp, those nearest the multiples of
  // pi/2 included (every one was checked against glibc); beyond, x 2/pi is rounded far enough from
  // the nearest integer that r leaves [-pi/4, pi/4].
  constexpr double kHigh = 1.5707963267948966;
  constexpr double kLow = 6.123233995736766e-17;
  Value* reduced = b.CreateIntrinsic(llvm::Intrinsic::fma, {f64_type}, {j, f64(b, -kHigh), wide});
  reduced = b.CreateIntrinsic(llvm::Intrinsic::fma, {f64_type}, {j, f64(b, -kLow), reduced});
  // Past 2^53, r can be anything: clamping it keeps the result in [-1, 1] (inaccurate, but never
  // inf or NaN for a finite x). Compare and select, unlike minnum, lets the NaN of x = +-inf
  // through.
  Value* r = b.CreateFPTrunc(reduced, b.getFloatTy());
  r = b.CreateSelect(b.CreateFCmpOGT(r, f32(b, 1.0)), f32(b, 1.0), r);
  r = b.CreateSelect(b.CreateFCmpOLT(r, f32(b, -1.0)), f32(b, -1.0), r);
  // j mod 4 exactly in float64, whatever j's size; an infinite x makes it NaN, which fptosi
  // would turn into poison, so that becomes 0.
  Value* j_mod_4 = b.CreateIntrinsic(
      llvm::Intrinsic::fma, {f64_type},
      {b.CreateIntrinsic(llvm::Intrinsic::floor, {f64_type}, {b.CreateFMul(j, f64(b, 0.25))}),
       f64(b, -4.0), j});
  j_mod_4 = b.CreateSelect(b.CreateFCmpUNO(j_mod_4, j_mod_4), f64(b, 0.0), j_mod_4);
  Value* quadrant = b.CreateFPToSI(j_mod_4, b.getInt32Ty());
  if (cosine) quadrant = b.CreateAnd(b.CreateAdd(quadrant, i32(b, 1)), i32(b, 3));
  Value* s = sin_kernel(b, r);
  Value* c = cos_kernel(b, r);
  // Quadrants 0..3 of sin: s, c, -s, -c.
  Value* odd = b.CreateICmpNE(b.CreateAnd(quadrant, i32(b, 1)), i32(b, 0));
  Value* negative = b.CreateICmpNE(b.CreateAnd(quadrant, i32(b, 2)), i32(b, 0));
  Value* magnitude = b.CreateSelect(odd, c, s);
  Value* result = b.CreateSelect(negative, b.CreateFNeg(magnitude), magnitude);
  // NaN stays NaN; sin also passes +-0 through, since r + r^3 p rounds -0 to +0.
  Value* passed_through = cosine ? is_nan(b, x) : b.CreateFCmpUEQ(x, f32(b, 0.0));
  return b.CreateSelect(passed_through, x, result);
}

}  // namespace

Value* emit_exp_f32(IRBuilderBase& b, Value* x) {
  // x = n ln2 + r, |r| <= ln2 / 2; exp(x) = 2^n exp(r).
  Value* clamped = b.CreateIntrinsic(
      llvm::Intrinsic::minnum, {b.getFloatTy()},
      {b.CreateIntrinsic(llvm::Intrinsic::maxnum, {b.getFloatTy()}, {x, f32(b, -104.0)}),
       f32(b, 89.0)});
  Value* n = b.CreateIntrinsic(llvm::Intrinsic::rint, {b.getFloatTy()},
                               {b.CreateFMul(clamped, f32(b, 1.44269504088896341))});
  Value* r =
      b.CreateIntrinsic(llvm::Intrinsic::fma, {b.getFloatTy()}, {n, f32(b, -0.693359375), clamped});
  r = b.CreateIntrinsic(llvm::Intrinsic::fma, {b.getFloatTy()}, {n, f32(b, 2.12194440e-4), r});
  Value* p = polynomial(b, r,
                        {5.0000001201e-1, 1.6666665459e-1, 4.1665795894e-2, 8.3334519073e-3,
                         1.3981999507e-3, 1.9875691500e-4});
  Value* r2 = b.CreateFMul(r, r);
  Value* e = b.CreateFAdd(b.CreateIntrinsic(llvm::Intrinsic::fma, {b.getFloatTy()}, {p, r2, r}),
                          f32(b, 1.0));
  // Scaling in two halves keeps both factors normal when 2^n itself would be subnormal.
  Value* whole = b.CreateFPToSI(n, b.getInt32Ty());
  Value* half = b.CreateAShr(whole, 1);
  Value* scaled = b.CreateFMul(b.CreateFMul(e, power_of_two(b, half)),
                               power_of_two(b, b.CreateSub(whole, half)));
  Value* overflow = b.CreateFCmpOGT(x, f32(b, 88.72283905206835));
  scaled = b.CreateSelect(overflow, f32(b, std::numeric_limits<float>::infinity()), scaled);
  Value* underflow = b.CreateFCmpOLT(x, f32(b, -103.972077083991796));
  scaled = b.CreateSelect(underflow, f32(b, 0.0), scaled);
  return b.CreateSelect(is_nan(b, x), x, scaled);
}

Value* emit_log_f32(IRBuilderBase& b, Value* x) {
  // Subnormal inputs are scaled by 2^23 first so the exponent field is meaningful.
  Value* subnormal = b.CreateFCmpOLT(x, f32(b, std::numeric_limits<float>::min()));
  Value* normal = b.CreateSelect(subnormal, b.CreateFMul(x, f32(b, 8388608.0)), x);
  Value* bits = b.CreateBitCast(normal, b.getInt32Ty());
  // x = m 2^e with m in [0.5, 1).
  Value* e = b.CreateSub(b.CreateAnd(b.CreateLShr(bits, 23), i32(b, 0xff)), i32(b, 126));
  e = b.CreateSelect(subnormal, b.CreateSub(e, i32(b, 23)), e);
  Value* m = b.CreateBitCast(b.CreateOr(b.CreateAnd(bits, i32(b, 0x807fffff)), i32(b, 0x3f000000)),
                             b.getFloatTy());
  // Move m to [sqrt(1/2), sqrt(2)) so that f = m - 1 is small.
  Value* below = b.CreateFCmpOLT(m, f32(b, 0.707106781186547524));
  e = b.CreateSelect(below, b.CreateSub(e, i32(b, 1)), e);
  Value* f = b.CreateFSub(b.CreateSelect(below, b.CreateFAdd(m, m), m), f32(b, 1.0));
  Value* z = b.CreateFMul(f, f);
  Value* p = polynomial(
      b, f,
      {3.3333331174e-1, -2.4999993993e-1, 2.0000714765e-1, -1.6668057665e-1, 1.4249322787e-1,
       -1.2420140846e-1, 1.1676998740e-1, -1.1514610310e-1, 7.0376836292e-2});
  Value* ef = b.CreateSIToFP(e, b.getFloatTy());
  Value* y = b.CreateFMul(b.CreateFMul(p, f), z);
  y = b.CreateIntrinsic(llvm::Intrinsic::fma, {b.getFloatTy()}, {ef, f32(b, -2.12194440e-4), y});
  y = b.CreateIntrinsic(llvm::Intrinsic::fma, {b.getFloatTy()}, {z, f32(b, -0.5), y});
  Value* result = b.CreateFAdd(f, y);
  result =
      b.CreateIntrinsic(llvm::Intrinsic::fma, {b.getFloatTy()}, {ef, f32(b, 0.693359375), result});
  // log(+inf) = +inf, log(0) = -inf, log(negative) = NaN, log(NaN) = NaN.
  const float infinity = std::numeric_limits<float>::infinity();
  result = b.CreateSelect(b.CreateFCmpOEQ(x, f32(b, infinity)), x, result);
  result = b.CreateSelect(b.CreateFCmpOEQ(x, f32(b, 0.0)), f32(b, -infinity), result);
  result = b.CreateSelect(b.CreateFCmpOLT(x, f32(b, 0.0)),
                          f32(b, std::numeric_limits<float>::quiet_NaN()), result);
  return b.CreateSelect(is_nan(b, x), x, result);
}

Value* emit_sin_f32(IRBuilderBase& b, Value* x) { return sin_or_cos(b, x, /*cosine=*/false); }
Value* emit_cos_f32(IRBuilderBase& b, Value* x) { return sin_or_cos(b, x, /*cosine=*/true); }

Value* emit_tanh_f32(IRBuilderBase& b, Value* x) {
  // Small |x|: odd polynomial (no cancellation). Otherwise 1 - 2 / (exp(2|x|) + 1), signed.
  Value* magnitude = b.CreateIntrinsic(llvm::Intrinsic::fabs, {b.getFloatTy()}, {x});
  Value* z = b.CreateFMul(x, x);
  Value* p = polynomial(b, z,
                        {-3.33332819422e-1, 1.33314422036e-1, -5.37397155531e-2, 2.06390887954e-2,
                         -5.70498872745e-3});
  Value* small =
      b.CreateIntrinsic(llvm::Intrinsic::fma, {b.getFloatTy()}, {b.CreateFMul(x, z), p, x});
  Value* e = emit_exp_f32(b, b.CreateFAdd(magnitude, magnitude));
  Value* large = b.CreateFSub(f32(b, 1.0), b.CreateFDiv(f32(b, 2.0), b.CreateFAdd(e, f32(b, 1.0))));
  Value* result = b.CreateSelect(b.CreateFCmpOLT(magnitude, f32(b, 0.625)), small, large);
  // tanh is odd: the sign of x, also for -0 (which the polynomial would round to +0).
  return b.CreateIntrinsic(llvm::Intrinsic::copysign, {b.getFloatTy()}, {result, x});
}

}  // namespace lz::codegen
