// Launching: the pending work a blocking point or a bound needs, optimized and queued on the
// devices' streams, with promised buffers in place of its results.
#pragma once

#include <memory>
#include <source_location>
#include <vector>

#include "ir/graph.h"
#include "lazuli/inspect.h"

namespace lz::frontend {

/// One device's part of an evaluation, optimized and ready to run (launch_state.h).
struct Launch;

/// Launches the nodes of `graph` (collected with `wiring`, its edges) that someone outside it
/// still holds, grouped by device, each group in a slot of its device's stream; they become data
/// leaves holding promised buffers at once. When `graph.outputs` names the requested results, a
/// held intermediate that is cheap to recompute stays pending instead (kept_results.h,
/// results_to_keep). When `claim` is set and the evaluation has a single device whose stream is
/// idle, the launch claims the whole stream instead of a slot: finish_launches runs it on the
/// calling thread. Called under the graph lock; the launches' passes have not run yet: pass them to
/// finish_launches once the lock is released. Throws when the passes cannot be built (nothing
/// changed then) or when a launch could not be queued (its promises then hold that failure, so
/// no reader waits forever).
std::vector<std::shared_ptr<Launch>> launch_kept(ir::Graph graph, ir::Wiring wiring,
                                                 EvaluationReason reason, std::source_location loc,
                                                 bool claim);

/// Outside the graph lock, so that other threads keep recording: runs the passes of each of
/// `launches` (a plan cache hit has none to run), lets its stream's slot run it, and runs a
/// claimed one on the calling thread, then gives its stream back. Throws the first failure of
/// the passes once every launch is released; the failed launch's promises hold it too.
void finish_launches(std::vector<std::shared_ptr<Launch>> launches);

}  // namespace lz::frontend
