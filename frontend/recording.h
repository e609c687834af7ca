// How the frontend turns a call into a recorded node: the one path every op goes through.
#pragma once

#include <source_location>
#include <string_view>
#include <vector>

#include "ir/node.h"
#include "lazuli/error.h"
#include "lazuli/tensor.h"

namespace lz::frontend {

/// A fresh, unrecorded node of `op` over `inputs`, attributed to the user's call at `loc`: on
/// the default device when it has no inputs (record gives any other its inputs' device).
ir::NodePtr make_node(ir::Op op, ir::NodeInputs inputs, std::source_location loc);

/// Rethrows `error`, the exception being handled, as an error about the user's call at `loc`: its
/// message names the line ("[add] at train.cpp:12: shapes ...") and Error::location() returns it.
/// An error that already names a line (an op recorded earlier failed) is rethrown unchanged. Every
/// public op ends in a handler that calls this, so that no error leaves lazuli without the line.
[[noreturn]] void rethrow_at_user_line(const Error& error, std::source_location loc);

/// Throws "[op] shape ... has a negative dimension" or one naming a shape too large to address.
void check_shape(std::string_view op, const Shape& shape);

/// Infers and sets the node's dtype and shape, then adds it to the pending graph. Throws lz::Error
/// (and records nothing) when the node is invalid. Evaluated nodes (data) are not pending.
Tensor record(ir::NodePtr node);

/// Uninitialized host storage for the elements of `shape` in `dtype`, after checking the shape;
/// beyond the memory limit, an lz::Error naming `op`, the bytes alive and the limit.
std::shared_ptr<memory::Buffer> allocate_host(std::string_view op, DType dtype, const Shape& shape);

/// A data leaf of `shape` on `device` holding `buffer` (computed, or promised by a launch).
Tensor record_data(std::shared_ptr<memory::Buffer> buffer, Shape shape, Device device,
                   std::source_location loc);

/// The node behind `tensor`; throws "[op] got an empty tensor handle" for a default-constructed
/// one.
const ir::NodePtr& node_of(const Tensor& tensor, std::string_view op);
/// The same, for a call at `loc` that does nothing else that can fail: the error names that line.
const ir::NodePtr& node_of(const Tensor& tensor, std::string_view op, std::source_location loc);

/// `tensor` converted to `dtype`; the same handle when it already has that dtype.
Tensor cast(const Tensor& tensor, DType dtype, std::source_location loc);
/// The same for a node: `node` itself, or the recorded `astype` of it.
ir::NodePtr cast_node(const ir::NodePtr& node, DType dtype, std::source_location loc);

/// A 0-d tensor holding `value` as `dtype` (a kernel parameter, never a literal), an operand of
/// the op being recorded: it is computed with that op, never pending on its own. Throws
/// "[op] scalar 3000000000 does not fit int32" when an integer dtype cannot hold it.
/// Shared by the ops that read the same number, it carries no line of theirs.
Tensor scalar(std::string_view op, const ScalarOperand& value, DType dtype);
/// The same constant as its node.
ir::NodePtr scalar_node(std::string_view op, const ScalarOperand& value, DType dtype);

/// The parameter `scalar` gives its constant, recording nothing: ops that take several operands
/// call it to check every number before they record any of them. Throws as `scalar` does.
ir::ScalarParam scalar_operand_param(std::string_view op, const ScalarOperand& value, DType dtype);

/// `value` as a parameter of an integer or floating `dtype`: a floating value is truncated toward
/// zero for integer dtypes. Throws when it does not fit (or is NaN/infinite for an integer dtype).
ir::ScalarParam scalar_param(std::string_view op, double value, DType dtype);

/// Result dtype of two tensors: the larger of bool < int32 < int64 < float32 < float64.
DType promote(DType a, DType b);

/// Result dtype of a tensor and a C++ number: the tensor's, unless the number's category is
/// higher (an integer number with a bool tensor gives int64, a floating one with a non-floating
/// tensor float32), as in PyTorch.
DType promote_with_scalar(DType tensor, ScalarOperand::Category number);

}  // namespace lz::frontend
