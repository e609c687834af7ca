#include "frontend/vjp_rules.h"

#include <numeric>
#include <utility>

#include "frontend/recording.h"
#include "lazuli/dist.h"
#include "lazuli/error.h"

namespace lz::frontend {
namespace {

using ir::BinaryOp;
using ir::Op;
using ir::UnaryOp;

/// One application of a rule: the forward node, its result and the cotangent, and the helpers
/// that record at the forward op's line.
class Rule {
 public:
  Rule(const ir::Node& forward, const Tensor& result, const Tensor& cotangent)
      : forward_(forward), result_(result), g_(cotangent), loc_(forward.location) {}

  std::vector<Tensor> apply(const std::vector<bool>& wanted);

 private:
  Tensor input(size_t i) const { return Tensor(forward_.inputs[i]); }
  const Shape& input_shape(size_t i) const { return forward_.inputs[i]->shape; }

  Tensor add(const Tensor& a, const Operand& b) const { return Traced(a, loc_) + b; }
  Tensor sub(const Tensor& a, const Operand& b) const { return Traced(a, loc_) - b; }
  Tensor mul(const Tensor& a, const Operand& b) const { return Traced(a, loc_) * b; }
  Tensor div(const Tensor& a, const Operand& b) const { return Traced(a, loc_) / b; }
  Tensor neg(const Tensor& a) const { return -Traced(a, loc_); }

  std::vector<Tensor> unary(const std::vector<bool>& wanted);
  std::vector<Tensor> binary(const std::vector<bool>& wanted);
  std::vector<Tensor> reduction();
  std::vector<Tensor> slice();
  std::vector<Tensor> concatenate(const std::vector<bool>& wanted);
  std::vector<Tensor> gather();
  std::vector<Tensor> matmul(const std::vector<bool>& wanted);
  std::vector<Tensor> collective();

  /// `t` (shaped like the result) summed over the axes along which input `i` was broadcast.
  Tensor unbroadcast(const Tensor& t, const Shape& shape) const;
  /// `t` (shaped like a reduction's result) with its reduced axes back as size 1.
  Tensor with_reduced_axes(const Tensor& t) const;
  /// An IR slice of `t`: per axis, the first index, the step and the count.
  Tensor strided(const Tensor& t, std::vector<int64_t> starts, std::vector<int64_t> steps,
                 Shape shape) const;
  /// `t` with `axis` widened to `extent` by zeros: `before` of them ahead of t's elements, the
  /// rest after (t's extent along axis fits in extent - before).
  Tensor pad(const Tensor& t, int axis, int64_t before, int64_t extent) const;

  const ir::Node& forward_;
  const Tensor& result_;
  const Tensor& g_;
  std::source_location loc_;
};

std::vector<Tensor> Rule::apply(const std::vector<bool>& wanted) {
  switch (ir::op_info(forward_.op).kind) {
    case ir::OpKind::Unary: return unary(wanted);
    case ir::OpKind::Binary:
    case ir::OpKind::Ternary: return binary(wanted);
    case ir::OpKind::Reduction: return reduction();
    case ir::OpKind::LinearAlgebra: return matmul(wanted);
    case ir::OpKind::Collective: return collective();
    case ir::OpKind::Movement: break;
    case ir::OpKind::Leaf: return {};
  }
  switch (forward_.op) {
    case Op::Reshape: return {lz::reshape(g_, input_shape(0), loc_)};
    case Op::Transpose: {
      std::vector<int> inverse(forward_.axes().size());
      for (size_t i = 0; i < inverse.size(); ++i) inverse[forward_.axes()[i]] = static_cast<int>(i);
      return {lz::transpose(g_, std::move(inverse), loc_)};
    }
    case Op::BroadcastTo: return {unbroadcast(g_, input_shape(0))};
    case Op::Slice: return slice();
    case Op::Gather: return gather();
    case Op::Concatenate: return concatenate(wanted);
    default: break;  // the other kinds returned above
  }
  throw Error("[" + std::string(ir::op_name(forward_.op)) + "] has no gradient rule");
}

std::vector<Tensor> Rule::unary(const std::vector<bool>& wanted) {
  if (!wanted[0]) return {Tensor()};
  const Tensor x = input(0);
  const Tensor& y = result_;
  switch (*ir::as_unary(forward_.op)) {
    case UnaryOp::Neg: return {neg(g_)};
    case UnaryOp::Exp: return {mul(g_, y)};
    case UnaryOp::Log: return {div(g_, x)};
    case UnaryOp::Sqrt: return {div(mul(g_, 0.5), y)};
    case UnaryOp::Rsqrt: return {mul(mul(g_, -0.5), mul(square(y, loc_), y))};  // -x^(-3/2) / 2
    case UnaryOp::Sin: return {mul(g_, cos(x, loc_))};
    case UnaryOp::Cos: return {neg(mul(g_, sin(x, loc_)))};
    case UnaryOp::Tanh: return {mul(g_, ScalarOperand(1) - Traced(square(y, loc_), loc_))};
    case UnaryOp::Sigmoid: return {mul(mul(g_, y), ScalarOperand(1) - Traced(y, loc_))};
    // The gradient at 0 is 0 for relu and abs, as in PyTorch and JAX.
    case UnaryOp::Relu: return {where(Traced(x, loc_) > 0, g_, 0, loc_)};
    case UnaryOp::Abs:
      return {where(Traced(x, loc_) > 0, g_, where(Traced(x, loc_) < 0, neg(g_), 0, loc_), loc_)};
    case UnaryOp::Square: return {mul(mul(g_, x), 2)};
    case UnaryOp::Astype: return {cast(g_, forward_.inputs[0]->dtype, loc_)};  // from floating
  }
  return {};
}

std::vector<Tensor> Rule::binary(const std::vector<bool>& wanted) {
  const Tensor& y = result_;
  std::vector<Tensor> out(forward_.inputs.size());
  auto set = [&](size_t i, auto contribution) {
    if (wanted[i]) out[i] = unbroadcast(contribution(), input_shape(i));
  };
  if (forward_.op == Op::Where) {
    const Tensor cond = input(0);
    set(1, [&] { return where(cond, g_, 0, loc_); });
    set(2, [&] { return where(cond, 0, g_, loc_); });
    return out;
  }
  const Tensor a = input(0);
  const Tensor b = input(1);
  switch (*ir::as_binary(forward_.op)) {
    case BinaryOp::Add:
      set(0, [&] { return g_; });
      set(1, [&] { return g_; });
      break;
    case BinaryOp::Sub:
      set(0, [&] { return g_; });
      set(1, [&] { return neg(g_); });
      break;
    case BinaryOp::Mul:
      set(0, [&] { return mul(g_, b); });
      set(1, [&] { return mul(g_, a); });
      break;
    case BinaryOp::Div:
      set(0, [&] { return div(g_, b); });
      set(1, [&] { return neg(div(mul(g_, y), b)); });
      break;
    case BinaryOp::Pow:
      // As JAX: b * a^(b-1) is taken as 0 where b == 0 (even at a == 0), and log(a) as 0 where
      // a == 0 (its factor a^b is 0 there unless b == 0).
      set(0, [&] {
        const Tensor slope = mul(b, pow(a, sub(b, 1), loc_));
        return mul(g_, where(Traced(b, loc_) == 0, 0, slope, loc_));
      });
      set(1, [&] { return mul(mul(g_, y), log(where(Traced(a, loc_) == 0, 1, a, loc_), loc_)); });
      break;
    case BinaryOp::Maximum:
    case BinaryOp::Minimum: {
      // Ties share the cotangent equally, as in PyTorch and JAX.
      const bool maximum = forward_.op == Op::Maximum;
      const Tensor a_wins = maximum ? Traced(a, loc_) > b : Traced(a, loc_) < b;
      const Tensor b_wins = maximum ? Traced(b, loc_) > a : Traced(b, loc_) < a;
      const Tensor half = mul(g_, 0.5);
      const Tensor tie = Traced(a, loc_) == b;
      set(0, [&] { return where(a_wins, g_, where(tie, half, 0, loc_), loc_); });
      set(1, [&] { return where(b_wins, g_, where(tie, half, 0, loc_), loc_); });
      break;
    }
    case BinaryOp::Equal:
    case BinaryOp::NotEqual:
    case BinaryOp::Less:
    case BinaryOp::LessEqual:
    case BinaryOp::Greater:
    case BinaryOp::GreaterEqual: break;  // bool results have no cotangent
  }
  return out;
}

std::vector<Tensor> Rule::reduction() {
  const Tensor x = input(0);
  const Tensor g = with_reduced_axes(g_);
  if (forward_.op == Op::Sum) return {lz::broadcast_to(g, x.shape(), loc_)};
  // Max and min: the cotangent goes to the elements equal to the result, shared equally by ties.
  const Tensor chosen = astype(Traced(x, loc_) == with_reduced_axes(result_), x.dtype(), loc_);
  std::vector<int> axes(forward_.axes().begin(), forward_.axes().end());
  const Tensor ties = lz::sum(chosen, axes, /*keepdims=*/true, loc_);
  return {mul(chosen, div(g, ties))};
}

// The loss is the sum of every rank's loss, so a rank's operand receives the cotangents of every
// rank's result: the rules are themselves collectives, which every rank records alike.
std::vector<Tensor> Rule::collective() {
  using dist::ReduceOp;
  switch (forward_.op) {
    case Op::AllSum: return {dist::all_reduce(g_, ReduceOp::Sum, loc_)};
    case Op::AllGather:
      return {lz::reshape(dist::reduce_scatter(g_, ReduceOp::Sum, loc_), input_shape(0), loc_)};
    case Op::ReduceScatter: return {dist::all_gather(g_, loc_)};
    case Op::Broadcast: {
      // Only the root's operand reaches the results. Every rank still takes part in the sum,
      // and multiplies by 0 or 1, which the simplifier keeps: a rank that dropped the sum would
      // leave the others waiting.
      const bool root = dist::rank(loc_) == forward_.collective().root;
      return {mul(dist::all_reduce(g_, ReduceOp::Sum, loc_), root ? 1 : 0)};
    }
    default: {  // all_max, all_min: to the ranks whose element is the result, shared by ties
      const Tensor x = input(0);
      const Tensor chosen = astype(Traced(x, loc_) == result_, x.dtype(), loc_);
      const Tensor ties = dist::all_reduce(chosen, ReduceOp::Sum, loc_);
      return {mul(chosen, div(dist::all_reduce(g_, ReduceOp::Sum, loc_), ties))};
    }
  }
}

std::vector<Tensor> Rule::slice() {
  // Undo the slice one axis at a time: reverse a negative step, interleave a step's skipped
  // elements as zeros, then pad with zeros before the first index and after the last.
  const Shape& shape = input_shape(0);
  Tensor g = g_;
  for (int d = 0; d < static_cast<int>(shape.size()); ++d) {
    const int64_t count = forward_.shape[d];
    int64_t first = forward_.starts()[d];
    int64_t step = forward_.steps()[d];
    if (count == shape[d] && step == 1) continue;
    if (count == 0) return {lz::zeros(shape, forward_.dtype, loc_)};
    const int rank = static_cast<int>(shape.size());
    if (step < 0) {
      std::vector<int64_t> starts(rank, 0);
      std::vector<int64_t> steps(rank, 1);
      starts[d] = count - 1;
      steps[d] = -1;
      g = strided(g, std::move(starts), std::move(steps), g.shape());
      first += (count - 1) * step;
      step = -step;
    }
    int64_t covered = count;
    if (step > 1) {
      const Tensor column = expand_dims(g, d + 1, loc_);
      Shape gap_shape = column.shape();
      gap_shape[d + 1] = step - 1;
      const Tensor gaps = lz::zeros(gap_shape, forward_.dtype, loc_);
      Shape spread = g.shape();
      covered = count * step;
      spread[d] = covered;
      g = lz::reshape(lz::concatenate({column, gaps}, d + 1, loc_), spread, loc_);
    }
    if (first + covered > shape[d]) {  // the zeros after the last element run past the end
      Shape kept = g.shape();
      kept[d] = shape[d] - first;
      g = strided(g, std::vector<int64_t>(rank, 0), std::vector<int64_t>(rank, 1), kept);
    }
    g = pad(g, d, first, shape[d]);
  }
  return {g};
}

std::vector<Tensor> Rule::concatenate(const std::vector<bool>& wanted) {
  const int axis = static_cast<int>(forward_.axes()[0]);
  const int rank = static_cast<int>(forward_.shape.size());
  std::vector<Tensor> out(forward_.inputs.size());
  int64_t offset = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    const Shape& shape = input_shape(i);
    if (wanted[i]) {
      std::vector<int64_t> starts(rank, 0);
      starts[axis] = offset;
      out[i] = strided(g_, std::move(starts), std::vector<int64_t>(rank, 1), shape);
    }
    offset += shape[axis];
  }
  return out;
}

std::vector<Tensor> Rule::gather() {
  // x's element j along the axis receives the cotangent of every read whose index is j: the
  // indices compared with each position of the axis, on a new axis after it, select the
  // cotangent, and a sum over the gathered axis adds the reads up. Indices outside the axis
  // match no position. The indices have no gradient.
  const int axis = static_cast<int>(forward_.axes()[0]);
  const Shape& x_shape = input_shape(0);
  const int64_t extent = x_shape[axis];
  const Tensor indices = lz::astype(input(1), int64, loc_);
  const Tensor position = where(Traced(indices, loc_) < 0, add(indices, extent), indices, loc_);
  Shape along_new_axis(x_shape.size() + 1, 1);
  along_new_axis[axis + 1] = extent;
  const Tensor positions =
      lz::reshape(lz::arange(0, static_cast<double>(extent), 1, int64, loc_), along_new_axis, loc_);
  const Tensor hits = Traced(lz::expand_dims(position, axis + 1, loc_), loc_) == positions;
  const Tensor spread = where(hits, lz::expand_dims(g_, axis + 1, loc_), 0, loc_);
  return {unbroadcast(lz::sum(spread, {axis}, /*keepdims=*/false, loc_), x_shape)};
}

std::vector<Tensor> Rule::matmul(const std::vector<bool>& wanted) {
  // Both operands have rank >= 2 in the IR; batch dimensions broadcast.
  auto swapped = [&](const Tensor& t) {
    std::vector<int> perm(t.ndim());
    std::iota(perm.begin(), perm.end(), 0);
    std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
    return lz::transpose(t, std::move(perm), loc_);
  };
  std::vector<Tensor> out(2);
  if (wanted[0]) out[0] = unbroadcast(lz::matmul(g_, swapped(input(1)), loc_), input_shape(0));
  if (wanted[1]) out[1] = unbroadcast(lz::matmul(swapped(input(0)), g_, loc_), input_shape(1));
  return out;
}

Tensor Rule::unbroadcast(const Tensor& t, const Shape& shape) const {
  const Shape from = t.shape();
  const size_t added = from.size() - shape.size();
  std::vector<int> axes;
  for (size_t d = 0; d < from.size(); ++d) {
    if (d < added || (shape[d - added] == 1 && from[d] != 1)) axes.push_back(static_cast<int>(d));
  }
  if (axes.empty()) return added == 0 ? t : lz::reshape(t, shape, loc_);
  return lz::reshape(lz::sum(t, axes, /*keepdims=*/true, loc_), shape, loc_);
}

Tensor Rule::with_reduced_axes(const Tensor& t) const {
  if (forward_.keepdims) return t;
  Shape shape = input_shape(0);
  for (int64_t axis : forward_.axes()) shape[axis] = 1;
  return lz::reshape(t, std::move(shape), loc_);
}

Tensor Rule::strided(const Tensor& t, std::vector<int64_t> starts, std::vector<int64_t> steps,
                     Shape shape) const {
  ir::NodePtr node = make_node(Op::Slice, {t.node()}, loc_);
  ir::NodeAttributes& attributes = node->set_attributes();
  attributes.starts = std::move(starts);
  attributes.steps = std::move(steps);
  node->shape = std::move(shape);
  return record(std::move(node));
}

Tensor Rule::pad(const Tensor& t, int axis, int64_t before, int64_t extent) const {
  Shape shape = t.shape();
  const int64_t after = extent - before - shape[axis];
  std::vector<Tensor> pieces;
  auto zeros_of = [&](int64_t count) {
    shape[axis] = count;
    pieces.push_back(lz::zeros(shape, forward_.dtype, loc_));
  };
  if (before > 0) zeros_of(before);
  pieces.push_back(t);
  if (after > 0) zeros_of(after);
  return pieces.size() == 1 ? t : lz::concatenate(pieces, axis, loc_);
}

}  // namespace

std::vector<Tensor> input_cotangents(const ir::Node& forward, const Tensor& result,
                                     const Tensor& cotangent, const std::vector<bool>& wanted) {
  const DeviceScope on_forward_device(forward.device);
  return Rule(forward, result, cotangent).apply(wanted);
}

}  // namespace lz::frontend
