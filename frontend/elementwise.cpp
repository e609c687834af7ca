// Elementwise ops: type promotion here, then one IR node over operands of a single dtype.
#include "frontend/recording.h"
#include "ir/type_inference.h"
#include "lazuli/error.h"
#include "support/hot_path.h"

namespace lz {
namespace {

using frontend::cast;
using frontend::make_node;
using frontend::node_of;
using frontend::record;
using ir::Op;

/// Records `op` over tensors already promoted to one dtype.
LZ_HOT_PATH Tensor record_elementwise(Op op, ir::NodeInputs inputs, std::source_location loc) {
  return record(make_node(op, std::move(inputs), loc));
}

/// The dtype both operands are computed in; `/` computes integers in float32.
DType compute_dtype(Op op, DType promoted) {
  if (op == Op::Div && !is_floating(promoted)) return float32;
  return promoted;
}

/// Records `op` over two operand nodes, each cast to the dtype both are computed in. They come
/// by value, each the reference its input will hold: every copy of a node pointer is an atomic
/// count, a measurable share of recording an op.
LZ_HOT_PATH Tensor binary_of_nodes(Op op, ir::NodePtr a, ir::NodePtr b, std::source_location loc) {
  const DType dtype = compute_dtype(op, frontend::promote(a->dtype, b->dtype));
  // Shapes are checked before any cast is recorded, so a rejected op records nothing (without
  // casts, recording the op checks them).
  if (a->dtype != dtype || b->dtype != dtype) {
    ir::broadcast_shapes(ir::op_name(op), a->shape, b->shape);
  }
  const auto converted = [&](ir::NodePtr& node) {
    return node->dtype == dtype ? std::move(node) : frontend::cast_node(node, dtype, loc);
  };
  ir::NodeInputs inputs;
  inputs.push_back(converted(a));
  inputs.push_back(converted(b));
  return record_elementwise(op, std::move(inputs), loc);
}

LZ_HOT_PATH Tensor binary(Op op, const Tensor& a, const Tensor& b, std::source_location loc) try {
  const std::string_view name = ir::op_name(op);
  return binary_of_nodes(op, node_of(a, name), node_of(b, name), loc);
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

LZ_HOT_PATH Tensor binary(Op op, const Tensor& a, const Operand& b, std::source_location loc) try {
  if (b.tensor() != nullptr) return binary(op, a, *b.tensor(), loc);
  const std::string_view name = ir::op_name(op);
  const ir::NodePtr& a_node = node_of(a, name);
  const DType dtype =
      compute_dtype(op, frontend::promote_with_scalar(a_node->dtype, b.scalar().category));
  ir::check_binary_dtype(op, dtype);  // before the number is recorded: a rejected op records none
  return binary_of_nodes(op, a_node, frontend::scalar_node(name, b.scalar(), dtype), loc);
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

Tensor binary(Op op, const ScalarOperand& a, const Tensor& b, std::source_location loc) try {
  const std::string_view name = ir::op_name(op);
  const ir::NodePtr& b_node = node_of(b, name);
  const DType dtype = compute_dtype(op, frontend::promote_with_scalar(b_node->dtype, a.category));
  ir::check_binary_dtype(op, dtype);
  return binary_of_nodes(op, frontend::scalar_node(name, a, dtype), b_node, loc);
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

/// exp, log, ... compute integers and bools in float32, as PyTorch does.
Tensor floating_unary(Op op, const Tensor& x, std::source_location loc) try {
  const ir::NodePtr& node = node_of(x, ir::op_name(op));
  const DType dtype = is_floating(node->dtype) ? node->dtype : float32;
  return record_elementwise(op, {cast(x, dtype, loc).node()}, loc);
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

Tensor unary(Op op, const Tensor& x, std::source_location loc) try {
  return record_elementwise(op, {node_of(x, ir::op_name(op))}, loc);
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

}  // namespace

Tensor operator+(Traced a, const Operand& b) { return binary(Op::Add, a.tensor, b, a.where); }
Tensor operator+(ScalarOperand a, Traced b) { return binary(Op::Add, a, b.tensor, b.where); }
Tensor operator-(Traced a, const Operand& b) { return binary(Op::Sub, a.tensor, b, a.where); }
Tensor operator-(ScalarOperand a, Traced b) { return binary(Op::Sub, a, b.tensor, b.where); }
Tensor operator*(Traced a, const Operand& b) { return binary(Op::Mul, a.tensor, b, a.where); }
Tensor operator*(ScalarOperand a, Traced b) { return binary(Op::Mul, a, b.tensor, b.where); }
Tensor operator/(Traced a, const Operand& b) { return binary(Op::Div, a.tensor, b, a.where); }
Tensor operator/(ScalarOperand a, Traced b) { return binary(Op::Div, a, b.tensor, b.where); }
Tensor operator-(Traced a) { return unary(Op::Neg, a.tensor, a.where); }

Tensor& operator+=(Tensor& a, TracedOperand b) {
  return a = binary(Op::Add, a, b.operand, b.where);
}
Tensor& operator-=(Tensor& a, TracedOperand b) {
  return a = binary(Op::Sub, a, b.operand, b.where);
}
Tensor& operator*=(Tensor& a, TracedOperand b) {
  return a = binary(Op::Mul, a, b.operand, b.where);
}
Tensor& operator/=(Tensor& a, TracedOperand b) {
  return a = binary(Op::Div, a, b.operand, b.where);
}

Tensor operator==(Traced a, const Operand& b) { return binary(Op::Equal, a.tensor, b, a.where); }
Tensor operator==(ScalarOperand a, Traced b) { return binary(Op::Equal, a, b.tensor, b.where); }
Tensor operator!=(Traced a, const Operand& b) { return binary(Op::NotEqual, a.tensor, b, a.where); }
Tensor operator!=(ScalarOperand a, Traced b) { return binary(Op::NotEqual, a, b.tensor, b.where); }
Tensor operator<(Traced a, const Operand& b) { return binary(Op::Less, a.tensor, b, a.where); }
Tensor operator<(ScalarOperand a, Traced b) { return binary(Op::Less, a, b.tensor, b.where); }
Tensor operator<=(Traced a, const Operand& b) {
  return binary(Op::LessEqual, a.tensor, b, a.where);
}
Tensor operator<=(ScalarOperand a, Traced b) { return binary(Op::LessEqual, a, b.tensor, b.where); }
Tensor operator>(Traced a, const Operand& b) { return binary(Op::Greater, a.tensor, b, a.where); }
Tensor operator>(ScalarOperand a, Traced b) { return binary(Op::Greater, a, b.tensor, b.where); }
Tensor operator>=(Traced a, const Operand& b) {
  return binary(Op::GreaterEqual, a.tensor, b, a.where);
}
Tensor operator>=(ScalarOperand a, Traced b) {
  return binary(Op::GreaterEqual, a, b.tensor, b.where);
}

// The public unary functions, one per LZ_UNARY_FUNCTION_OP row of op_table.def: lz::exp(x)
// records Op::Exp, computing integers and bools in float32 where the row's dtypes are Floating.
#define LZ_UNARY_FUNCTION_OP(Enum, name, dtypes, ...)                                          \
  Tensor name(const Tensor& x, std::source_location loc) {                                     \
    return ir::DTypeRule::dtypes == ir::DTypeRule::Floating ? floating_unary(Op::Enum, x, loc) \
                                                            : unary(Op::Enum, x, loc);         \
  }
#include "lazuli/op_table.def"

Tensor pow(const Tensor& base, const Operand& exponent, std::source_location loc) try {
  // As in numpy and PyTorch: an integer power with a negative exponent has no integer result.
  // (A tensor exponent cannot be checked before it is computed; see tensor.h.) The dtype it is
  // computed in decides: a bool base with an integer exponent is computed in int64.
  const DType base_dtype = node_of(base, "pow")->dtype;
  if (exponent.tensor() == nullptr &&
      exponent.scalar().category != ScalarOperand::Category::Floating &&
      exponent.scalar().integer < 0) {
    const DType dtype = frontend::promote_with_scalar(base_dtype, exponent.scalar().category);
    if (is_integer(dtype)) {
      throw Error(std::string("[pow] integers to the negative power ") +
                  std::to_string(exponent.scalar().integer) + " are not integers (base is " +
                  dtype_name(base_dtype) + ", computed in " + dtype_name(dtype) +
                  "); use a floating base: astype(float32)");
    }
  }
  return binary(Op::Pow, base, exponent, loc);
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}
Tensor pow(ScalarOperand base, const Tensor& exponent, std::source_location loc) {
  return binary(Op::Pow, base, exponent, loc);
}
Tensor maximum(const Tensor& a, const Operand& b, std::source_location loc) {
  return binary(Op::Maximum, a, b, loc);
}
Tensor maximum(ScalarOperand a, const Tensor& b, std::source_location loc) {
  return binary(Op::Maximum, a, b, loc);
}
Tensor minimum(const Tensor& a, const Operand& b, std::source_location loc) {
  return binary(Op::Minimum, a, b, loc);
}
Tensor minimum(ScalarOperand a, const Tensor& b, std::source_location loc) {
  return binary(Op::Minimum, a, b, loc);
}

Tensor where(const Tensor& cond, const Operand& a, const Operand& b, std::source_location loc) try {
  const ir::NodePtr& cond_node = node_of(cond, "where");
  if (cond_node->dtype != bool_) {
    throw Error(std::string("[where] condition must be bool, got ") + dtype_name(cond_node->dtype) +
                    "; compare it (x != 0) or use astype(bool_)",
                Error::Kind::Type);
  }
  // The values' dtype: promoted between tensors; a number joins as in binary ops; two numbers
  // give the default dtype of their highest category.
  const Tensor* a_tensor = a.tensor();
  const Tensor* b_tensor = b.tensor();
  DType dtype;
  if (a_tensor != nullptr && b_tensor != nullptr) {
    dtype =
        frontend::promote(node_of(*a_tensor, "where")->dtype, node_of(*b_tensor, "where")->dtype);
  } else if (a_tensor != nullptr) {
    dtype = frontend::promote_with_scalar(node_of(*a_tensor, "where")->dtype, b.scalar().category);
  } else if (b_tensor != nullptr) {
    dtype = frontend::promote_with_scalar(node_of(*b_tensor, "where")->dtype, a.scalar().category);
  } else {
    dtype = frontend::promote_with_scalar(frontend::promote_with_scalar(bool_, a.scalar().category),
                                          b.scalar().category);
  }
  // Everything that can fail is checked before a cast or a constant is recorded: the numbers
  // must fit the dtype and the three shapes must broadcast.
  const auto shape_of = [&](const Operand& operand) {
    if (operand.tensor() != nullptr) return operand.tensor()->node()->shape;
    frontend::scalar_operand_param("where", operand.scalar(), dtype);
    return Shape{};
  };
  ir::where_shape(cond_node->shape, shape_of(a), shape_of(b));
  const auto value = [&](const Operand& operand) {
    return operand.tensor() != nullptr ? cast(*operand.tensor(), dtype, loc)
                                       : frontend::scalar("where", operand.scalar(), dtype);
  };
  const Tensor a_value = value(a);
  const Tensor b_value = value(b);
  return record_elementwise(Op::Where, {cond_node, a_value.node(), b_value.node()}, loc);
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

Tensor astype(const Tensor& x, DType dtype, std::source_location loc) {
  return cast(x, dtype, loc);
}

Tensor Tensor::astype(DType dtype, std::source_location loc) const {
  return cast(*this, dtype, loc);
}

}  // namespace lz
