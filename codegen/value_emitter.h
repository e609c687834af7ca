// What both code generators compute the same way: the value of a fused kernel's node at a
// position of its index space, written once over the code each backend is made of.
//
// Every node is computed element by element: emitting a node at an index emits its inputs at
// the indices it reads, so broadcasting, reshapes, transposes and slices are index arithmetic and
// nothing between the kernel's inputs and outputs is stored. A position is a multi-index, a
// row-major linear position, or both (the missing form is derived on first use), and each value
// is emitted once per position within the loop body being emitted (the memo).
//
// A backend derives from ValueEmitter<Backend, Value> (the curiously recurring template), where
// Value is what its code is made of: llvm::Value* for the LLVM emitter (cpu/kernel_emitter.h),
// the text of a C++ expression for the CUDA one (cuda/source_emitter.h). It renders:
//   index_constant(int64_t), index_add(a, b), index_scale(x, factor),
//   index_divide(x, divisor), index_remainder(x, divisor)   non-negative 64-bit index arithmetic
//                                       (factor an int64_t; divisor an int64_t or a Value)
//   index_multiply(a, b)                the product of two non-negative indices
//   index_scalar(node, slot)            a runtime scalar slot of `node` (a slice's start) as an
//                                       index
//   runtime_extent(slot)                a runtime extent (Sizes::Runtime) from its scalar slot
//   name_index(x)                       an index expression bound to a name (or x itself)
//   load_input(node, index)             a kernel input read at `index`
//   leaf(node, index)                   full, arange, random_* at `index`
//   cast(node, x), unary(node, x), binary(node, x, y), select(node, condition, a, b)
//   concatenate(node, index)            the one view whose inputs each hold part of the result
//   gather_position(node, raw, extent)  a gather's index value `raw` as a position on an axis of
//                                       `extent` (a Value) elements: {the position, counted from
//                                       the end when negative and clamped into the axis, whether
//                                       it was inside}
//   gather_fill(node)                   what a gather gives for an index outside the axis
//   refuse(node)                        [[noreturn]]: an op no kernel computes (a matmul)
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/node.h"
#include "ir/op.h"
#include "plan/fusion_plan.h"
#include "plan/kernel_layout.h"
#include "plan/unsupported_kernel.h"

namespace lz::codegen {

template <class Backend, class Value>
class ValueEmitter {
 public:
  /// A position in a node's index space: its multi-index (one Value per dimension, or empty
  /// until needed), its row-major linear position (Value{} until needed), or both.
  struct Index {
    const Shape* shape = nullptr;
    std::vector<Value> dims;
    Value linear{};
  };

 protected:
  ValueEmitter(const plan::Kernel& kernel, plan::Sizes sizes) : layout_(kernel, sizes) {}

  // -----------------------------------------------------------------------------------------
  // Extents

  /// An extent, or a product of extents (a stride): a number the code holds, or, for a runtime
  /// extent (Sizes::Runtime), a value read at run time (`known` is then unused).
  struct Extent {
    int64_t known = 1;
    Value runtime{};
  };

  /// `value`, an extent of one of the kernel's shapes, as the code holds it.
  Extent extent(int64_t value) {
    const auto found = layout_.runtime_extent_slot.find(value);
    if (found == layout_.runtime_extent_slot.end()) return Extent{value, Value{}};
    return Extent{0, backend().runtime_extent(found->second)};
  }

  Value extent_value(const Extent& e) {
    return e.runtime != Value{} ? e.runtime : backend().index_constant(e.known);
  }

  Extent product(const Extent& a, const Extent& b) {
    if (a.runtime == Value{} && b.runtime == Value{}) return Extent{a.known * b.known, Value{}};
    if (a.runtime == Value{} && a.known == 1) return b;
    if (b.runtime == Value{} && b.known == 1) return a;
    return Extent{0, backend().index_multiply(extent_value(a), extent_value(b))};
  }

  Value scaled(Value x, const Extent& factor) {
    return factor.runtime != Value{} ? backend().index_multiply(x, factor.runtime)
                                     : backend().index_scale(x, factor.known);
  }

  // -----------------------------------------------------------------------------------------
  // Positions

  const std::vector<Value>& dims_of(Index& index) {
    const Shape& shape = *index.shape;
    if (index.dims.size() == shape.size()) return index.dims;
    index.dims.assign(shape.size(), Value{});
    Value rest = index.linear;
    for (size_t d = shape.size(); d-- > 0;) {
      if (shape[d] == 1) {
        index.dims[d] = backend().index_constant(0);
      } else if (d == 0) {
        index.dims[d] = rest;
      } else {
        const Extent divisor = extent(shape[d]);
        if (divisor.runtime != Value{}) {
          index.dims[d] = backend().index_remainder(rest, divisor.runtime);
          rest = backend().index_divide(rest, divisor.runtime);
        } else {
          index.dims[d] = backend().index_remainder(rest, divisor.known);
          rest = backend().index_divide(rest, divisor.known);
        }
      }
    }
    return index.dims;
  }

  const Value& linear_of(Index& index) {
    if (index.linear != Value{}) return index.linear;
    const Shape& shape = *index.shape;
    Value sum{};
    Extent stride;
    for (size_t d = shape.size(); d-- > 0;) {
      if (shape[d] != 1) {
        Value term = scaled(index.dims[d], stride);
        sum = sum == Value{} ? term : backend().index_add(term, sum);
        if (d > 0) stride = product(stride, extent(shape[d]));
      }
    }
    index.linear = sum == Value{} ? backend().index_constant(0) : backend().name_index(sum);
    return index.linear;
  }

  /// The index of `input` read by a node at `index` under numpy broadcasting.
  Index broadcast_index(Index& index, const ir::Node& input) {
    if (input.size() == 1) return Index{&input.shape, {}, backend().index_constant(0)};
    if (input.shape == *index.shape) return index;
    const std::vector<Value>& dims = dims_of(index);
    const size_t offset = dims.size() - input.shape.size();
    Index result{&input.shape, std::vector<Value>(input.shape.size()), Value{}};
    for (size_t d = 0; d < input.shape.size(); ++d) {
      result.dims[d] = input.shape[d] == 1 ? backend().index_constant(0) : dims[d + offset];
    }
    return result;
  }

  /// Where a loop over the elements of its range node at `loop` computes `output`: in a flat
  /// kernel every output is read at the loop's linear position, whatever its shape.
  Index output_index(const ir::Node* output, const Index& loop) const {
    return layout_.flat ? Index{&output->shape, {}, loop.linear} : loop;
  }

  // -----------------------------------------------------------------------------------------
  // Values

  /// The value of `node` at `index`, emitted once per index within the current loop body.
  Value emit_value(const ir::Node* node, Index& index) {
    if (auto found = reduction_values_.find(node); found != reduction_values_.end()) {
      return found->second;  // the reduction's result at the kept position being computed
    }
    MemoKey key = memo_key(node, index);
    if (auto found = memo_.find(key); found != memo_.end()) return found->second;
    Value value = compute(node, index);
    memo_.emplace(std::move(key), value);
    return value;
  }

  /// Makes `value` what emit_value(node, index) returns in the current loop body.
  void remember(const ir::Node* node, Index& index, Value value) {
    memo_[memo_key(node, index)] = std::move(value);
  }

  Value input_value(const ir::Node& node, int i, Index& index) {
    const ir::Node& input = *node.inputs[i];
    Index at = broadcast_index(index, input);
    return emit_value(&input, at);
  }

  /// Values by node and position (multi-index or linear, never taken for one another).
  using MemoKey = std::tuple<const ir::Node*, bool, std::vector<Value>>;
  using Memo = std::map<MemoKey, Value>;

  const plan::KernelLayout layout_;
  Memo memo_;
  /// Each reduction's result at the kept position being computed.
  std::unordered_map<const ir::Node*, Value> reduction_values_;

 private:
  Backend& backend() { return static_cast<Backend&>(*this); }

  MemoKey memo_key(const ir::Node* node, Index& index) {
    if (index.linear != Value{}) return MemoKey{node, true, {index.linear}};
    return MemoKey{node, false, dims_of(index)};
  }

  Value compute(const ir::Node* node, Index& index) {
    if (!layout_.position.contains(node)) return backend().load_input(node, index);
    switch (ir::op_info(node->op).kind) {
      case ir::OpKind::Leaf: return backend().leaf(node, index);
      case ir::OpKind::Unary: {
        Value x = input_value(*node, 0, index);
        return node->op == ir::Op::Astype ? backend().cast(node, x) : backend().unary(node, x);
      }
      case ir::OpKind::Binary: {
        Value x = input_value(*node, 0, index);
        Value y = input_value(*node, 1, index);
        return backend().binary(node, x, y);
      }
      case ir::OpKind::Ternary: {
        Value condition = input_value(*node, 0, index);
        Value if_true = input_value(*node, 1, index);
        Value if_false = input_value(*node, 2, index);
        return backend().select(node, condition, if_true, if_false);
      }
      case ir::OpKind::Movement: return compute_movement(node, index);
      case ir::OpKind::Reduction:
        throw plan::UnsupportedKernel("a reduction is read outside the loop that computes it");
      case ir::OpKind::LinearAlgebra:
      case ir::OpKind::Collective: break;
    }
    backend().refuse(node);
  }

  Value compute_movement(const ir::Node* node, Index& index) {
    const ir::Node& input = *node->inputs[0];
    switch (node->op) {
      case ir::Op::Reshape: {
        // Adding or removing size-1 axes keeps every other index: read them across when this
        // position has its multi-index (a loop row by row), instead of linearizing it and
        // dividing it up again by the input's extents (a division per element).
        if (!index.dims.empty() && same_extents_apart_from_ones(input.shape, node->shape)) {
          Index at{&input.shape, std::vector<Value>(input.shape.size()), Value{}};
          for (size_t from = 0, to = 0; to < input.shape.size(); ++to) {
            if (input.shape[to] == 1) {
              at.dims[to] = backend().index_constant(0);
              continue;
            }
            while (node->shape[from] == 1) ++from;
            at.dims[to] = index.dims[from++];
          }
          return emit_value(&input, at);
        }
        Index at{&input.shape, {}, linear_of(index)};
        return emit_value(&input, at);
      }
      case ir::Op::BroadcastTo: return input_value(*node, 0, index);
      case ir::Op::Transpose: {
        const std::vector<Value> dims = dims_of(index);
        Index at{&input.shape, std::vector<Value>(dims.size()), Value{}};
        for (size_t d = 0; d < dims.size(); ++d) at.dims[node->axes()[d]] = dims[d];
        return emit_value(&input, at);
      }
      case ir::Op::Slice: {
        // The starts are runtime scalars: a loop over windows compiles the kernel once.
        const std::vector<Value> dims = dims_of(index);
        Index at{&input.shape, std::vector<Value>(dims.size()), Value{}};
        for (size_t d = 0; d < dims.size(); ++d) {
          at.dims[d] = backend().index_add(backend().index_scalar(node, static_cast<int>(d)),
                                           backend().index_scale(dims[d], node->steps()[d]));
        }
        return emit_value(&input, at);
      }
      case ir::Op::Concatenate: return backend().concatenate(node, index);
      case ir::Op::Gather: return compute_gather(node, index);
      default: break;
    }
    throw plan::UnsupportedKernel(std::string(ir::op_name(node->op)) + " movement");
  }

  /// Whether two shapes have the same extents once their size-1 axes are left out.
  static bool same_extents_apart_from_ones(const Shape& a, const Shape& b) {
    size_t i = 0, j = 0;
    while (true) {
      while (i < a.size() && a[i] == 1) ++i;
      while (j < b.size() && b[j] == 1) ++j;
      if (i == a.size() || j == b.size()) return i == a.size() && j == b.size();
      if (a[i++] != b[j++]) return false;
    }
  }

  /// The index is a value of the kernel like any other; x is read where it points, at a position
  /// clamped into the axis so that no read leaves x, and an index outside gives the fill.
  Value compute_gather(const ir::Node* node, Index& index) {
    const ir::Node& x = *node->inputs[0];
    const int64_t axis = node->axes()[0];
    if (x.shape[axis] == 0) return backend().gather_fill(node);
    Value raw = input_value(*node, 1, index);
    const auto [position, inside] =
        backend().gather_position(node, raw, extent_value(extent(x.shape[axis])));
    const std::vector<Value> dims = dims_of(index);
    Index at{&x.shape, std::vector<Value>(dims.size()), Value{}};
    for (size_t d = 0; d < dims.size(); ++d) {
      at.dims[d] = x.shape[d] == 1 ? backend().index_constant(0) : dims[d];
    }
    at.dims[axis] = position;
    Value value = emit_value(&x, at);
    return backend().select(node, inside, value, backend().gather_fill(node));
  }
};

}  // namespace lz::codegen
