// The op set of the IR: every node computes exactly one of these.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace lz::ir {

enum class Op : uint8_t {
  // Leaves.
  Data,           // a computed or user-supplied buffer
  Full,           // every element = params[0]
  Arange,         // element i = params[0] + i * params[1]
  RandomUniform,  // counter-based, in [params[0], params[1])
  RandomNormal,   // counter-based, mean params[0], standard deviation params[1]
  // Unary elementwise.
  Neg,
  Exp,
  Log,
  Sqrt,
  Rsqrt,
  Sin,
  Cos,
  Tanh,
  Sigmoid,
  Relu,
  Abs,
  Square,
  Astype,  // conversion to the node's dtype
  // Binary elementwise, numpy broadcasting, both operands of one dtype.
  Add,
  Sub,
  Mul,
  Div,
  Pow,
  Maximum,
  Minimum,
  Equal,
  NotEqual,
  Less,
  LessEqual,
  Greater,
  GreaterEqual,
  // Ternary elementwise: where(cond, a, b).
  Where,
  // Reductions over `axes`.
  Sum,
  Max,
  Min,
  Argmax,
  Argmin,
  // Movement.
  Reshape,      // to the node's shape
  Transpose,    // axes = permutation
  BroadcastTo,  // to the node's shape
  Slice,        // starts, steps per axis; the node's shape gives the extent
  Concatenate,  // axes = {axis}
  Gather,       // gather(x, indices), axes = {axis}: x read where indices point along axis
  // Linear algebra: batched matrix product of operands with rank >= 2, batch dims broadcast.
  MatMul,
  // Collectives across the ranks of the process group (lz::dist). axes = {ranks} (Broadcast:
  // {ranks, root}); seed = the collective's sequence number in the rank's recording order.
  AllSum,         // every rank gets the elementwise sum of all ranks' operands
  AllMax,         // ... their maximum (bool: or)
  AllMin,         // ... their minimum (bool: and)
  AllGather,      // the ranks' operands concatenated along axis 0 (a 0-d operand: stacked)
  ReduceScatter,  // the sum of all ranks' operands, split along axis 0: rank r gets part r
  Broadcast,      // every rank gets the root rank's operand
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

struct OpInfo {
  std::string_view name;  // as printed in IR text and in error messages
  OpKind kind;
  int arity;  // number of inputs; -1 for variadic (concatenate)
};

const OpInfo& op_info(Op op);
inline std::string_view op_name(Op op) { return op_info(op).name; }
/// The op printed as `name`, if any.
std::optional<Op> op_from_name(std::string_view name);
/// Comparisons produce bool from operands of any dtype.
bool is_comparison(Op op);
/// Collectives move data between ranks: each runs alone, through the process group's
/// communicator, never fused, folded or recomputed.
inline bool is_collective(Op op) { return op_info(op).kind == OpKind::Collective; }

inline constexpr int kOpCount = static_cast<int>(Op::Broadcast) + 1;

}  // namespace lz::ir
