// Blocking points: forcing the pending graph to be computed.
#pragma once

#include <source_location>
#include <vector>

#include "ir/node.h"
#include "lazuli/inspect.h"

namespace lz::frontend {

/// Computes what `roots` need that is still pending, then returns. `loc` is the user's call that
/// blocked; `reason` is recorded for the log and last_evaluation().
void evaluate(std::vector<ir::NodePtr> roots, EvaluationReason reason, std::source_location loc);

/// Computes every pending node that is still reachable.
void evaluate_all(EvaluationReason reason, std::source_location loc);

}  // namespace lz::frontend
