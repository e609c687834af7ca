// Hand-made fusion plans for the scheduling tests (defined in scheduling_test.cpp), so the pass
// is tested without depending on the fusion pass.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "passes/pass.h"
#include "plan/fusion_plan.h"

namespace lz::passes::test {

/// The plan whose kernel k computes the nodes at positions groups[k] of `graph`.
plan::FusionPlan plan_of(const ir::Graph& graph, const std::vector<std::vector<int>>& groups);

/// Parses `ir`, makes the plan of `groups` and runs the schedule pass over `streams` streams.
PassContext run_schedule(const std::string& ir, const std::vector<std::vector<int>>& groups,
                         int streams = 2);

}  // namespace lz::passes::test
