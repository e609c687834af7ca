// Looking inside: the IR behind tensors and why evaluations happened (dumps and logs are set in
// lazuli/settings.h).
#pragma once

#include <cstdint>
#include <source_location>
#include <string>
#include <vector>

#include "lazuli/tensor.h"

namespace lz {

/// IR text of the pending graph that computes `outputs`. Values already computed appear as
/// `data` leaves. The format is documented in ir/printer.h and parses back with lazuli-opt.
std::string ir_text(const std::vector<Tensor>& outputs,
                    std::source_location loc = std::source_location::current());
/// The same graph in Graphviz DOT.
std::string ir_dot(const std::vector<Tensor>& outputs,
                   std::source_location loc = std::source_location::current());

/// What forced an evaluation.
enum class EvaluationReason {
  Item,
  ToVector,
  Read,  // data() or copy_to()
  Print,
  WaitToRead,
  WaitAll,
  EvalAsync,
  NodeBudget,  // more nodes pending than set_max_pending_nodes allows
  SyncEngine,  // LZ_ENGINE=sync computes each op as it is recorded
};
const char* evaluation_reason_name(EvaluationReason reason);

/// One forced evaluation of the pending graph.
struct EvaluationRecord {
  uint64_t number = 0;        // 1 for the first evaluation of the process
  EvaluationReason reason{};  // the blocking point that forced it
  std::string location;       // "file:line" of the user's call that blocked
  int64_t nodes = 0;          // recorded nodes computed
  int64_t kernels = 0;        // kernels launched for them
  // Results a Tensor still holds that were left pending instead of written out: intermediates
  // cheap to compute again (elementwise, movement, generated), e.g. the C++ temporaries of a
  // one-line expression. Reading one later computes it then.
  int64_t left_pending = 0;
  // Preparation: from the blocking point until the work could run: the passes done, or their
  // result taken from the plan cache.
  double prepare_milliseconds = 0;
  // Wall time of the evaluation: from the blocking point until its results were computed (on a
  // CUDA device: until its kernels were queued); 0 while it has not finished.
  double milliseconds = 0;
};
/// The most recent evaluation; number == 0 if there was none.
EvaluationRecord last_evaluation();

/// Starts writing a Chrome trace (open it in Perfetto or chrome://tracing) to `path`: spans for
/// recording, each pass, compiling, launching and running each kernel, per thread and stream,
/// with arrows from each launch to its execution, and the blocking points' waits with their
/// reason. LZ_TRACE=path starts one at the first op. Throws lz::Error when `path` cannot be
/// written.
void start_trace(const std::string& path);
/// Writes the trace started by start_trace (or LZ_TRACE) and stops collecting; no effect when
/// none runs. A trace still running at exit is written then.
void stop_trace();

}  // namespace lz
