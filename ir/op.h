// The op set of the IR: every node computes exactly one of these. The ops and what is known of
// each come from one table, include/lazuli/op_table.def.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace lz::ir {

enum class Op : uint8_t {
#define LZ_OP(Enum, ...) Enum,
#include "lazuli/op_table.def"
};

enum class OpKind : uint8_t {
  Leaf,
  Unary,
  Binary,
  Ternary,
  Reduction,
  Movement,
  LinearAlgebra,
  Collective,
};

/// The dtype of an op's result (op_table.def says what each means).
enum class DTypeRule : uint8_t { Given, Same, Floating, Bool, Index };
/// Whether moving an op's elements costs more than computing them: kernels of MemoryBound ops
/// only stream their outputs past the cache and split into large chunks.
enum class CostClass : uint8_t { MemoryBound, ComputeBound };
/// Whether the op has a vector-Jacobian product (frontend/vjp_rules.cpp).
enum class Gradient : uint8_t { None, Rule };
/// What the differential fuzzer feeds the op (op_table.def).
enum class FuzzDomain : uint8_t {
  Any,
  NonBool,
  Floating,
  FloatingSmall,
  FloatingAtLeastOne,
  Structured,
  Excluded,
};

struct OpInfo {
  std::string_view name;  // as printed in IR text and in error messages
  OpKind kind;
  int arity;  // number of inputs; -1 for variadic (concatenate)
  DTypeRule dtypes;
  CostClass cost;
  Gradient gradient;
  std::string_view numpy_name;  // numpy's elementwise function, empty where numpy has none
  FuzzDomain fuzz;
};

inline constexpr int kOpCount = 0
#define LZ_OP(...) +1
#include "lazuli/op_table.def"
    ;

namespace detail {
inline constexpr OpInfo kOpTable[kOpCount] = {
#define LZ_OP(Enum, name, kind, arity, dtypes, cost, gradient, numpy, fuzz) \
  {#name,           OpKind::kind,       arity, DTypeRule::dtypes,           \
   CostClass::cost, Gradient::gradient, numpy, FuzzDomain::fuzz},
#include "lazuli/op_table.def"
};
}  // namespace detail

/// What the table says of `op`; inline, since recording asks it of every op.
inline const OpInfo& op_info(Op op) { return detail::kOpTable[static_cast<int>(op)]; }
inline std::string_view op_name(Op op) { return op_info(op).name; }
/// The op printed as `name`, if any.
std::optional<Op> op_from_name(std::string_view name);
/// Comparisons produce bool from operands of any dtype.
inline bool is_comparison(Op op) { return op_info(op).dtypes == DTypeRule::Bool; }
/// Collectives move data between ranks: each runs alone, through the process group's
/// communicator, never fused, folded or recomputed.
inline bool is_collective(Op op) { return op_info(op).kind == OpKind::Collective; }

/// The unary and binary elementwise ops on their own, so that the code of each (interpreter,
/// code generators, gradients, fuzzer) switches over exactly them, without `default:`: a new row
/// in op_table.def fails the build (-Werror=switch) until every one of them has its case.
enum class UnaryOp : uint8_t {
#define LZ_OP(Enum, name, kind, ...) LZ_OP_IF_##kind(Enum)
#define LZ_OP_IF_Unary(Enum) Enum,
#define LZ_OP_IF_Leaf(Enum)
#define LZ_OP_IF_Binary(Enum)
#define LZ_OP_IF_Ternary(Enum)
#define LZ_OP_IF_Reduction(Enum)
#define LZ_OP_IF_Movement(Enum)
#define LZ_OP_IF_LinearAlgebra(Enum)
#define LZ_OP_IF_Collective(Enum)
#include "lazuli/op_table.def"
#undef LZ_OP_IF_Unary
#define LZ_OP_IF_Unary(Enum)
};
enum class BinaryOp : uint8_t {
#define LZ_OP(Enum, name, kind, ...) LZ_OP_IF_##kind(Enum)
#undef LZ_OP_IF_Binary
#define LZ_OP_IF_Binary(Enum) Enum,
#include "lazuli/op_table.def"
#undef LZ_OP_IF_Binary
};
#undef LZ_OP_IF_Unary
#undef LZ_OP_IF_Leaf
#undef LZ_OP_IF_Ternary
#undef LZ_OP_IF_Reduction
#undef LZ_OP_IF_Movement
#undef LZ_OP_IF_LinearAlgebra
#undef LZ_OP_IF_Collective

/// `op` as a unary or binary elementwise op; nullopt for an op of another kind.
std::optional<UnaryOp> as_unary(Op op);
std::optional<BinaryOp> as_binary(Op op);

}  // namespace lz::ir
