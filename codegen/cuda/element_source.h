// One element of every elementwise op and dtype as a CUDA C++ expression, computing what the
// interpreter computes (reference/interpreter_elementwise.cpp).
#pragma once

#include <string>

#include "ir/op.h"
#include "lazuli/dtype.h"

namespace lz::codegen::cuda {

/// The C++ type a value of `dtype` has in generated code ("float", "lz_i64", "bool").
const char* value_type(DType dtype);
/// The C++ type of a buffer element ("lz_bool_storage" for bools).
const char* storage_type(DType dtype);

/// A call of a function of reference/scalar_semantics.h (which the preamble embeds) for values
/// of `dtype`: "lz::reference::<function><float>(<arguments>)".
std::string reference_call(const char* function, DType dtype, const std::string& arguments);

/// `x`, a value of `from`, converted to `to` by the rules of astype.
std::string cast_expression(DType from, DType to, const std::string& x);
/// op(x) for a unary op (not astype) over `dtype`. Throws lz::Error when `dtype` has no form.
std::string unary_expression(ir::Op op, DType dtype, const std::string& x);
/// op(x, y) for a binary op whose operands have `dtype` (comparisons give bool).
std::string binary_expression(ir::Op op, DType dtype, const std::string& x, const std::string& y);

/// A literal of `dtype` for the identity of max (lowest) or min (highest).
std::string extremum_identity(DType dtype, bool lowest);

}  // namespace lz::codegen::cuda
