// Blocking points: forcing the pending graph to be computed.
#pragma once

#include <source_location>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "lazuli/inspect.h"

namespace lz::frontend {

/// Computes what `roots` need that is still pending, then returns. `loc` is the user's call that
/// blocked; `reason` is recorded for the log and last_evaluation().
void evaluate(std::vector<ir::NodePtr> roots, EvaluationReason reason, std::source_location loc);

/// Computes every pending node that is still reachable.
void evaluate_all(EvaluationReason reason, std::source_location loc);

/// Whether `node` has been computed, consistently with evaluations on other threads.
bool is_computed(const ir::NodePtr& node);

/// `describe` of the pending graph behind `roots`, while no evaluation is rewriting it.
std::string describe_pending(std::vector<ir::NodePtr> roots,
                             std::string (*describe)(const ir::Graph&));

}  // namespace lz::frontend
