#include "ir/op.h"

namespace lz::ir {

std::optional<Op> op_from_name(std::string_view name) {
  for (int i = 0; i < kOpCount; ++i) {
    if (detail::kOpTable[i].name == name) return static_cast<Op>(i);
  }
  return std::nullopt;
}

std::optional<UnaryOp> as_unary(Op op) {
  switch (op) {
#define LZ_OP(Enum, name, kind, ...) LZ_OP_CASE_##kind(Enum)
#define LZ_OP_CASE_Unary(Enum) \
  case Op::Enum:               \
    return UnaryOp::Enum;
#define LZ_OP_CASE_Leaf(Enum)
#define LZ_OP_CASE_Binary(Enum)
#define LZ_OP_CASE_Ternary(Enum)
#define LZ_OP_CASE_Reduction(Enum)
#define LZ_OP_CASE_Movement(Enum)
#define LZ_OP_CASE_LinearAlgebra(Enum)
#define LZ_OP_CASE_Collective(Enum)
#include "lazuli/op_table.def"
    default: return std::nullopt;  // every other kind
  }
}

std::optional<BinaryOp> as_binary(Op op) {
  switch (op) {
#undef LZ_OP_CASE_Unary
#define LZ_OP_CASE_Unary(Enum)
#undef LZ_OP_CASE_Binary
#define LZ_OP_CASE_Binary(Enum) \
  case Op::Enum:                \
    return BinaryOp::Enum;
#define LZ_OP(Enum, name, kind, ...) LZ_OP_CASE_##kind(Enum)
#include "lazuli/op_table.def"
    default: return std::nullopt;  // every other kind
  }
}

}  // namespace lz::ir
