#include "codegen/cpu/random_numbers.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Module.h>

#include "reference/counter_rng.h"

namespace lz::codegen {
namespace {

using llvm::Value;
namespace rng = reference;

Value* i64(llvm::IRBuilderBase& b, uint64_t value) { return b.getInt64(value); }
Value* real(llvm::IRBuilderBase& b, double value) {
  return llvm::ConstantFP::get(b.getDoubleTy(), value);
}

/// reference::mix64.
Value* mix64(llvm::IRBuilderBase& b, Value* x) {
  x = b.CreateXor(x, b.CreateLShr(x, 30));
  x = b.CreateMul(x, i64(b, 0xbf58476d1ce4e5b9ULL));
  x = b.CreateXor(x, b.CreateLShr(x, 27));
  x = b.CreateMul(x, i64(b, 0x94d049bb133111ebULL));
  return b.CreateXor(x, b.CreateLShr(x, 31));
}

/// reference::uniform_unit at `counter`, with `mixed_seed` = mix64(seed).
Value* uniform_unit(llvm::IRBuilderBase& b, Value* mixed_seed, Value* counter) {
  Value* step = b.CreateMul(b.CreateAdd(counter, i64(b, 1)), i64(b, 0x9e3779b97f4a7c15ULL));
  Value* bits = mix64(b, b.CreateAdd(mixed_seed, step));
  // Below 2^53: converted exactly.
  return b.CreateFMul(b.CreateUIToFP(b.CreateLShr(bits, 11), b.getDoubleTy()), real(b, 0x1p-53));
}

/// reference::log_of_normal.
Value* log_of_normal(llvm::IRBuilderBase& b, Value* u) {
  llvm::Type* f64 = b.getDoubleTy();
  Value* bits = b.CreateBitCast(u, b.getInt64Ty());
  Value* mantissa =
      b.CreateOr(b.CreateAnd(bits, i64(b, 0x000fffffffffffffULL)), i64(b, 0x3ff0000000000000ULL));
  Value* above = b.CreateICmpUGT(mantissa, i64(b, rng::sqrt_two_bits()));
  mantissa = b.CreateSub(mantissa, b.CreateSelect(above, i64(b, 0x0010000000000000ULL), i64(b, 0)));
  Value* exponent = b.CreateAdd(b.CreateSub(b.CreateLShr(bits, 52), i64(b, 1023)),
                                b.CreateZExt(above, b.getInt64Ty()));
  Value* k = b.CreateSIToFP(exponent, f64);
  Value* f = b.CreateFSub(b.CreateBitCast(mantissa, f64), real(b, 1.0));
  Value* s = b.CreateFDiv(f, b.CreateFAdd(real(b, 2.0), f));
  Value* z = b.CreateFMul(s, s);
  Value* w = b.CreateFMul(z, z);
  const auto term = [&](int i) { return real(b, rng::log_term(i)); };
  // w * (L1 + w * (L3 + w * L5))
  Value* even = b.CreateFMul(w, term(5));
  even = b.CreateFMul(w, b.CreateFAdd(term(3), even));
  even = b.CreateFMul(w, b.CreateFAdd(term(1), even));
  // z * (L0 + w * (L2 + w * (L4 + w * L6)))
  Value* odd = b.CreateFMul(w, term(6));
  odd = b.CreateFMul(w, b.CreateFAdd(term(4), odd));
  odd = b.CreateFMul(w, b.CreateFAdd(term(2), odd));
  odd = b.CreateFMul(z, b.CreateFAdd(term(0), odd));
  Value* r = b.CreateFAdd(odd, even);
  Value* half_square = b.CreateFMul(b.CreateFMul(real(b, 0.5), f), f);
  // k ln2_high - ((half_square - (s (half_square + r) + k ln2_low)) - f)
  Value* inner = b.CreateFAdd(b.CreateFMul(s, b.CreateFAdd(half_square, r)),
                              b.CreateFMul(k, real(b, rng::ln2_low())));
  Value* tail = b.CreateFSub(b.CreateFSub(half_square, inner), f);
  return b.CreateFSub(b.CreateFMul(k, real(b, rng::ln2_high())), tail);
}

/// reference::cos_of_turn.
Value* cos_of_turn(llvm::IRBuilderBase& b, Value* u) {
  Value* quarters = b.CreateFMul(u, real(b, 4.0));
  Value* nearest = b.CreateFPToSI(b.CreateFAdd(quarters, real(b, 0.5)), b.getInt64Ty());
  Value* q = b.CreateSIToFP(nearest, b.getDoubleTy());
  Value* x = b.CreateFMul(b.CreateFSub(quarters, q), real(b, rng::half_pi()));
  Value* x2 = b.CreateFMul(x, x);
  Value* c = real(b, rng::cos_term(0));
  Value* s = real(b, rng::sin_term(0));
  for (int t = 1; t < 9; ++t) {
    c = b.CreateFAdd(b.CreateFMul(c, x2), real(b, rng::cos_term(t)));
    s = b.CreateFAdd(b.CreateFMul(s, x2), real(b, rng::sin_term(t)));
  }
  s = b.CreateFMul(s, x);
  Value* quadrant = b.CreateAnd(nearest, i64(b, 3));
  Value* odd = b.CreateICmpNE(b.CreateAnd(quadrant, i64(b, 1)), i64(b, 0));
  Value* value = b.CreateSelect(odd, s, c);
  Value* negative =
      b.CreateOr(b.CreateICmpEQ(quadrant, i64(b, 1)), b.CreateICmpEQ(quadrant, i64(b, 2)));
  return b.CreateSelect(negative, b.CreateFNeg(value), value);
}

}  // namespace

Value* emit_normal_element(llvm::IRBuilderBase& builder, llvm::Module& module, Value* seed,
                           Value* position, Value* mean, Value* std) {
  llvm::IRBuilderBase& b = builder;
  Value* mixed_seed = mix64(b, seed);  // the same for every element: hoisted from the loop
  Value* pair = b.CreateMul(position, i64(b, 2));
  Value* u1 = b.CreateFSub(real(b, 1.0), uniform_unit(b, mixed_seed, pair));
  Value* u2 = uniform_unit(b, mixed_seed, b.CreateAdd(pair, i64(b, 1)));
  llvm::Function* sqrt =
      llvm::Intrinsic::getDeclaration(&module, llvm::Intrinsic::sqrt, {b.getDoubleTy()});
  Value* radius = b.CreateCall(sqrt, {b.CreateFMul(real(b, -2.0), log_of_normal(b, u1))});
  // mean + std * radius * cos(2 pi u2), left to right as in C++
  return b.CreateFAdd(mean, b.CreateFMul(b.CreateFMul(std, radius), cos_of_turn(b, u2)));
}

}  // namespace lz::codegen
