// Constant values for the simplification pass, computed by the reference interpreter so that a
// folded constant can never disagree with what evaluating the original node would give.
#pragma once

#include <optional>

#include "ir/node.h"

namespace lz::passes::detail {

/// A `full` node that has not been evaluated: every element is the same known value.
bool is_constant(const ir::Node& node);

/// The element a `full` node produces, as that node's dtype holds it (a float32 fill value
/// rounded to float32, an int32 one wrapped to int32, a bool one made 0 or 1).
ir::ScalarParam constant_value(const ir::Node& full);

/// The element an elementwise node (unary, binary, where) computes when every input is a
/// constant, or nothing when the interpreter rejects the node (evaluation reports that instead).
std::optional<ir::ScalarParam> fold_elementwise(const ir::Node& node);

/// Turns `node`, in place, into a `full` of its own dtype and shape; its location stays.
void become_full(ir::Node& node, ir::ScalarParam value);

/// A new 0-d `full` node.
ir::NodePtr make_scalar_constant(DType dtype, ir::ScalarParam value,
                                 const std::source_location& location);

}  // namespace lz::passes::detail
