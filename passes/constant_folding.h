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

/// What the simplifier's rules read of a constant's value (passes/simplification.cpp): each
/// predicate below, and everything the rules decide from a value, is here, so that the plan
/// cache can tell which values the rules would treat alike (simplifier_class).
/// Whether every element of constant `node` is 1.
bool constant_is_one(const ir::Node& node);
/// Whether x + c == x for every x: integer 0, or float -0.0 (+0.0 would turn -0.0 into +0.0).
bool constant_is_additive_identity(const ir::Node& node);
/// Whether x - c == x for every x: integer 0, or float +0.0.
bool constant_is_subtractive_identity(const ir::Node& node);
/// A power of two of magnitude >= 1: scaling by it is exact until it overflows.
bool is_growing_power_of_two(double value);
/// The predicates above, and finiteness, of constant `node`, as bits: two constants of one
/// class are rewritten alike by every rule that computes no new value from them.
int64_t simplifier_class(const ir::Node& node);

/// The element an elementwise node (unary, binary, where) computes when every input is a
/// constant, or nothing when the interpreter rejects the node (evaluation reports that instead).
std::optional<ir::ScalarParam> fold_elementwise(const ir::Node& node);

/// Turns `node`, in place, into a `full` of its own dtype and shape; its location stays.
void become_full(ir::Node& node, ir::ScalarParam value);

/// A new 0-d `full` node.
ir::NodePtr make_scalar_constant(DType dtype, ir::ScalarParam value,
                                 const std::source_location& location);

}  // namespace lz::passes::detail
