// matmul with numpy's rules, lowered to the IR's batched matmul of rank >= 2 operands.
#include "frontend/recording.h"
#include "ir/type_inference.h"
#include "lazuli/error.h"

namespace lz {

Tensor matmul(const Tensor& a, const Tensor& b, std::source_location loc) try {
  const ir::NodePtr& a_node = frontend::node_of(a, "matmul");
  const ir::NodePtr& b_node = frontend::node_of(b, "matmul");
  const Shape& a_shape = a_node->shape;
  const Shape& b_shape = b_node->shape;
  // Formatted only for an error: every matmul passes here.
  const auto shapes = [&] { return shape_string(a_shape) + " and " + shape_string(b_shape); };
  if (a_shape.empty() || b_shape.empty()) {
    throw Error("[matmul] operands must be at least 1-d, got shapes " + shapes() +
                "; multiply by a scalar with * instead");
  }
  // Everything is checked against the user's shapes before anything is recorded.
  const int64_t k_a = a_shape.back();
  const int64_t k_b = b_shape.size() == 1 ? b_shape[0] : b_shape[b_shape.size() - 2];
  if (k_a != k_b) {
    throw Error("[matmul] shapes " + shapes() + " cannot be multiplied: contraction dimensions " +
                std::to_string(k_a) + " and " + std::to_string(k_b) + " differ");
  }
  const Shape a_batch(a_shape.begin(), a_shape.end() - std::min<size_t>(2, a_shape.size()));
  const Shape b_batch(b_shape.begin(), b_shape.end() - std::min<size_t>(2, b_shape.size()));
  try {
    ir::broadcast_shapes("matmul", a_batch, b_batch);
  } catch (const Error&) {
    throw Error("[matmul] batch dimensions of shapes " + shapes() +
                " cannot be broadcast: " + shape_string(a_batch) + " vs " + shape_string(b_batch) +
                " (each dimension must agree or be 1)");
  }
  const DType dtype = frontend::promote(a_node->dtype, b_node->dtype);
  if (dtype == bool_) {
    throw Error("[matmul] is not defined for bool operands (shapes " + shapes() +
                    "); convert with astype first",
                Error::Kind::Type);
  }

  // numpy promotes a 1-d left operand to a row (1,k) and a 1-d right one to a column (k,1), and
  // removes the added dimension from the result.
  Tensor left = frontend::cast(a, dtype, loc);
  Tensor right = frontend::cast(b, dtype, loc);
  if (a_shape.size() == 1) left = reshape(left, {1, k_a}, loc);
  if (b_shape.size() == 1) right = reshape(right, {k_b, 1}, loc);
  Tensor product =
      frontend::record(frontend::make_node(ir::Op::MatMul, {left.node(), right.node()}, loc));
  if (a_shape.size() > 1 && b_shape.size() > 1) return product;
  Shape shape = product.shape();
  if (b_shape.size() == 1) shape.pop_back();
  if (a_shape.size() == 1) shape.erase(shape.end() - (b_shape.size() == 1 ? 1 : 2));
  return reshape(product, std::move(shape), loc);
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

}  // namespace lz
