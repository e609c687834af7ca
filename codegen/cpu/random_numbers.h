// Counter-based random numbers as LLVM IR: reference/counter_rng.h's operations, one for one,
// so that the loop vectorizer computes a vector of elements at a time and every element has the
// interpreter's bits.
#pragma once

namespace llvm {
class IRBuilderBase;
class Module;
class Value;
}  // namespace llvm

namespace lz::codegen {

/// Element `position` (i64) of random_normal with `seed` (i64), `mean` and `std` (double), as
/// reference::normal_element computes it, in double.
llvm::Value* emit_normal_element(llvm::IRBuilderBase& builder, llvm::Module& module,
                                 llvm::Value* seed, llvm::Value* position, llvm::Value* mean,
                                 llvm::Value* std);

}  // namespace lz::codegen
