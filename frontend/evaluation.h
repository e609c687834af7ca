// Blocking points: forcing the pending graph to be computed.
#pragma once

#include <mutex>
#include <source_location>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "lazuli/inspect.h"

namespace lz::frontend {

// The pending graph is shared by every thread, behind one lock (lock_graph). A blocking point
// or a bound launches what is pending: under the lock it is optimized, split by device and
// queued on the devices' streams, and the results become data leaves holding promised buffers.
// Waiting happens outside the lock, for the promised buffers the caller needs.

/// Launches what `roots` need that is still pending; when `reason` is a blocking point, waits
/// for the roots and raises the first failure among them. `loc` is the user's call.
void evaluate(std::vector<ir::NodePtr> roots, EvaluationReason reason, std::source_location loc);

/// Launches every pending node that is still reachable; for waitall, then waits for every
/// stream and raises the earliest failure no blocking point has raised.
void evaluate_all(EvaluationReason reason, std::source_location loc);

/// Called with each node recorded (outside the lock): computes it at once under
/// LZ_ENGINE=sync, and launches the pending graph when it holds more nodes than the budget.
void after_recording(const ir::NodePtr& node);

/// The pending graph's lock: recording takes it to read its inputs and join the graph.
std::lock_guard<std::mutex> lock_graph();

/// The stream of each device the calling thread launches on (lz::StreamScope; 0 by default).
int current_stream();

/// Whether `node` has been computed (or failed), consistently with evaluations on other threads.
bool is_computed(const ir::NodePtr& node);

/// `describe` of the pending graph behind `roots`, while no evaluation is rewriting it.
std::string describe_pending(std::vector<ir::NodePtr> roots,
                             std::string (*describe)(const ir::Graph&));

}  // namespace lz::frontend
