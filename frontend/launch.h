// Launching: the pending work a blocking point or a bound needs, optimized and queued on the
// devices' streams, with promised buffers in place of its results.
#pragma once

#include <exception>
#include <memory>
#include <source_location>
#include <string>

#include "ir/graph.h"
#include "lazuli/inspect.h"

namespace lz::frontend {

/// One device's part of an evaluation, optimized and ready to run (defined in launch.cpp).
struct Launch;

/// Launches the nodes of `graph` that someone outside it still holds, grouped by device, each
/// group on its device's stream; they become data leaves holding promised buffers at once.
/// When `graph.outputs` names the requested results, a held intermediate that is cheap to
/// recompute stays pending instead (launch.cpp, results_to_keep).
/// When `claim` is set and the evaluation has a single device whose stream is idle, the launch
/// is returned instead of queued: the caller runs it with run_claimed, outside the graph lock.
/// Called under the graph lock. Throws when the passes fail (nothing changed then) or when the
/// launch could not be queued (its promises then hold that failure, so no reader waits forever).
std::shared_ptr<Launch> launch_kept(const ir::Graph& graph, EvaluationReason reason,
                                    std::source_location loc, bool claim);

/// Runs a launch returned by launch_kept on the calling thread, then gives its stream back.
/// Does nothing for null.
void run_claimed(std::shared_ptr<Launch> claimed);

/// Back-pressure: blocks until fewer than max_in_flight() launches are unfinished and their
/// promised bytes are at most half the memory limit, saying in the log why it waited.
void wait_for_room(std::source_location loc);

/// Failures of launched work that no blocking point has raised yet: a blocking point that
/// raises one forgets it; waitall raises the earliest and forgets them all (null when none).
void forget_failure(const std::exception_ptr& error);
std::exception_ptr take_earliest_failure();

/// The record of the latest launch (under the graph lock).
EvaluationRecord last_launch_record();

/// "file:line" of a user's call.
std::string location_string(std::source_location loc);

}  // namespace lz::frontend
