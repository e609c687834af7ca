// A step of the "fuse" pass after flat kernels merge: collectives move up to run early.
#pragma once

#include "plan/fusion_plan.h"

namespace lz::passes {

/// Moves each collective's kernel up to just after the last kernel that computes one of its
/// inputs and the collective recorded before it (collectives run in the order they were
/// recorded, which every rank shares: by sequence number, whatever the graph's order), then
/// numbers the kernels in their new order. What a collective needs runs before what only later
/// collectives need; otherwise the kernels keep their order. The executor hands a collective to
/// the communication thread and goes on, so a collective placed early overlaps the kernels that
/// follow it: a gradient bucket's all-reduce runs while the rest of the backward pass computes.
void hoist_collectives(plan::FusionPlan& plan);

}  // namespace lz::passes
