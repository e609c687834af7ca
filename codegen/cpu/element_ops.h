// One element of one op as LLVM IR: the value semantics of every elementwise op and dtype,
// matching the reference interpreter (reference/interpreter_elementwise.cpp). Values of dtype
// bool are i1 in registers and one byte in memory.
#pragma once

#include "ir/op.h"
#include "lazuli/dtype.h"

namespace llvm {
class IRBuilderBase;
class LLVMContext;
class Module;
class Type;
class Value;
}  // namespace llvm

namespace lz::codegen {

/// The register type of `dtype` (i1 for bool).
llvm::Type* value_type(llvm::LLVMContext& context, DType dtype);
/// The in-memory type of `dtype` (i8 for bool).
llvm::Type* storage_type(llvm::LLVMContext& context, DType dtype);
/// A value loaded from memory as a register value, and back.
llvm::Value* from_storage(llvm::IRBuilderBase& builder, DType dtype, llvm::Value* stored);
llvm::Value* to_storage(llvm::IRBuilderBase& builder, DType dtype, llvm::Value* value);

/// `value` converted from `from` to `to` by the rules of astype.
llvm::Value* emit_cast(llvm::IRBuilderBase& builder, DType from, DType to, llvm::Value* value);

/// A unary op (not astype) on a value of `dtype`.
llvm::Value* emit_unary(llvm::IRBuilderBase& builder, llvm::Module& module, ir::Op op, DType dtype,
                        llvm::Value* x);

/// A binary op or comparison on two values of `dtype`.
llvm::Value* emit_binary(llvm::IRBuilderBase& builder, llvm::Module& module, ir::Op op, DType dtype,
                         llvm::Value* a, llvm::Value* b);

/// Calls a function of runtime_symbols() (codegen/cpu/runtime_helpers.h) by name, declaring it
/// in `module` as pure.
llvm::Value* emit_runtime_call(llvm::IRBuilderBase& builder, llvm::Module& module, const char* name,
                               llvm::Type* result, std::initializer_list<llvm::Value*> arguments);

}  // namespace lz::codegen
