// The passes of a launch: the pipeline its settings configure (disabled passes, dumps), and the
// plan cache that keeps their results for graphs of a structure seen before.
#pragma once

#include "ir/graph.h"
#include "passes/plan_cache.h"

namespace lz::frontend {

struct Launch;

/// The process's plan cache; never destroyed: launches run at exit.
passes::PlanCache& plan_cache();

/// Looks the structure of `graph` (collected with `wiring`) up in the plan cache, unless the plan
/// cache is off or the launch dumps its passes, and on a miss builds the passes that will run on
/// it, into `launch`. A pipeline that cannot be built is logged, put on record and thrown, with
/// `launch` abandoned: nothing was launched. Called under the graph lock.
void look_up_plan(Launch& launch, const ir::Graph& graph, const ir::Wiring& wiring);

}  // namespace lz::frontend
