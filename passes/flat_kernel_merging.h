// The last step of the "fuse" pass: flat kernels of one size merge into one.
#pragma once

#include "ir/graph.h"
#include "passes/pass.h"
#include "plan/fusion_plan.h"

namespace lz::passes {

/// Merges each flat kernel (plan::is_flat: one loop over its elements) into the first earlier
/// flat kernel of the same element count whose place it can take: the merged kernel runs where
/// the earlier one did, so everything the later one reads must be computed by then. One loop then
/// computes both: values they share are read once, a value one computes and the other reads is no
/// longer written out (unless asked for or read elsewhere), and a launch is saved. A gradient
/// makes such siblings everywhere: the cotangents of a + b, a * b and their inputs are computed
/// from the same values. Within options.max_kernel_ops and max_kernel_inputs.
void merge_flat_kernels(plan::FusionPlan& plan, const ir::Graph& graph, const PassOptions& options);

}  // namespace lz::passes
