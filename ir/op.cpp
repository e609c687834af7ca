#include "ir/op.h"

#include <array>

namespace lz::ir {
namespace {

constexpr std::array<OpInfo, kOpCount> kOpTable = {{
    {"data", OpKind::Leaf, 0},
    {"full", OpKind::Leaf, 0},
    {"arange", OpKind::Leaf, 0},
    {"random_uniform", OpKind::Leaf, 0},
    {"random_normal", OpKind::Leaf, 0},
    {"neg", OpKind::Unary, 1},
    {"exp", OpKind::Unary, 1},
    {"log", OpKind::Unary, 1},
    {"sqrt", OpKind::Unary, 1},
    {"rsqrt", OpKind::Unary, 1},
    {"sin", OpKind::Unary, 1},
    {"cos", OpKind::Unary, 1},
    {"tanh", OpKind::Unary, 1},
    {"sigmoid", OpKind::Unary, 1},
    {"relu", OpKind::Unary, 1},
    {"abs", OpKind::Unary, 1},
    {"square", OpKind::Unary, 1},
    {"astype", OpKind::Unary, 1},
    {"add", OpKind::Binary, 2},
    {"sub", OpKind::Binary, 2},
    {"mul", OpKind::Binary, 2},
    {"div", OpKind::Binary, 2},
    {"pow", OpKind::Binary, 2},
    {"maximum", OpKind::Binary, 2},
    {"minimum", OpKind::Binary, 2},
    {"equal", OpKind::Binary, 2},
    {"not_equal", OpKind::Binary, 2},
    {"less", OpKind::Binary, 2},
    {"less_equal", OpKind::Binary, 2},
    {"greater", OpKind::Binary, 2},
    {"greater_equal", OpKind::Binary, 2},
    {"where", OpKind::Ternary, 3},
    {"sum", OpKind::Reduction, 1},
    {"max", OpKind::Reduction, 1},
    {"min", OpKind::Reduction, 1},
    {"argmax", OpKind::Reduction, 1},
    {"argmin", OpKind::Reduction, 1},
    {"reshape", OpKind::Movement, 1},
    {"transpose", OpKind::Movement, 1},
    {"broadcast_to", OpKind::Movement, 1},
    {"slice", OpKind::Movement, 1},
    {"concatenate", OpKind::Movement, -1},
    {"gather", OpKind::Movement, 2},
    {"matmul", OpKind::LinearAlgebra, 2},
    {"all_sum", OpKind::Collective, 1},
    {"all_max", OpKind::Collective, 1},
    {"all_min", OpKind::Collective, 1},
    {"all_gather", OpKind::Collective, 1},
    {"reduce_scatter", OpKind::Collective, 1},
    {"broadcast", OpKind::Collective, 1},
}};

}  // namespace

const OpInfo& op_info(Op op) { return kOpTable[static_cast<int>(op)]; }

std::optional<Op> op_from_name(std::string_view name) {
  for (int i = 0; i < kOpCount; ++i) {
    if (kOpTable[i].name == name) return static_cast<Op>(i);
  }
  return std::nullopt;
}

bool is_comparison(Op op) { return op >= Op::Equal && op <= Op::GreaterEqual; }

}  // namespace lz::ir
