#include "frontend/evaluation.h"

#include <chrono>
#include <cstdio>
#include <functional>
#include <mutex>
#include <utility>

#include "frontend/evaluation_records.h"
#include "frontend/in_flight.h"
#include "frontend/launch.h"
#include "frontend/recording.h"
#include "frontend/settings.h"
#include "frontend/unreported_failures.h"
#include "ir/graph.h"
#include "ir/pending_list.h"
#include "memory/buffer.h"
#include "memory/wait_check.h"
#include "runtime/devices.h"
#include "support/hot_path.h"
#include "support/trace.h"

namespace lz::frontend {
namespace {

// The pending graph is one, shared by every thread, behind this lock: recording adds to it,
// an evaluation collects and launches from it. The passes (finish_launches) and the launched
// work run outside the lock.
std::mutex graph_mutex;

bool is_blocking(EvaluationReason reason) {
  return reason != EvaluationReason::EvalAsync && reason != EvaluationReason::NodeBudget;
}

/// Waits for the buffer of each evaluated root, and on a device for the work queued to write
/// it, raising the first failure among them.
void wait_for(const std::vector<ir::NodePtr>& roots, EvaluationReason reason,
              std::source_location loc) {
  for (const ir::NodePtr& root : roots) {
    const memory::Buffer& buffer = *root->buffer;
    const auto start = std::chrono::steady_clock::now();
    bool waited = false;
    const auto traced = [&](const auto& wait) {
      support::trace::Span span("wait", evaluation_reason_name(reason));
      span.arg("location", location_string(loc));
      wait();
      waited = true;
    };
    if (!buffer.is_ready()) traced([&] { buffer.wait(); });
    if (const std::exception_ptr& error = buffer.error()) {
      forget_failure(error);
      std::rethrow_exception(error);
    }
    if (const memory::DeviceMemory* memory = buffer.device_memory()) {
      traced([&] { memory->wait(); });
    }
    if (waited && current_settings().log_level != LogLevel::Off) {
      std::fprintf(
          stderr, "[lazuli] %s at %s waited %.3fms for a launched result\n",
          evaluation_reason_name(reason), location_string(loc).c_str(),
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count());
    }
  }
}

}  // namespace

void evaluate(std::vector<ir::NodePtr> roots, EvaluationReason reason, std::source_location loc) {
  const bool blocking = is_blocking(reason);
  bool any_pending = false;
  {
    std::lock_guard lock(graph_mutex);
    for (const ir::NodePtr& root : roots) any_pending = any_pending || !root->is_evaluated();
  }
  // Back-pressure only for a thread about to launch, and outside the lock.
  if (any_pending) wait_for_room(loc);
  std::vector<std::shared_ptr<Launch>> launched;
  {
    std::lock_guard lock(graph_mutex);
    std::vector<ir::NodePtr> pending;
    for (const ir::NodePtr& root : roots) {
      if (!root->is_evaluated()) pending.push_back(root);
    }
    if (!pending.empty()) {
      ir::Wiring wiring;
      ir::Graph graph = ir::Graph::collect(pending, &wiring);
      pending.clear();  // the graph's outputs hold them now
      launched = launch_kept(std::move(graph), std::move(wiring), reason, loc, blocking);
    }
  }
  finish_launches(std::move(launched));
  if (blocking) wait_for(roots, reason, loc);
}

void evaluate_all(EvaluationReason reason, std::source_location loc) {
  if (ir::PendingList::global().size() > 0) wait_for_room(loc);
  std::vector<std::shared_ptr<Launch>> launched;
  {
    std::lock_guard lock(graph_mutex);
    std::vector<ir::NodePtr> pending = ir::PendingList::global().snapshot();
    if (!pending.empty()) {
      ir::Wiring wiring;
      ir::Graph graph = ir::Graph::collect(pending, &wiring, pending.size());
      pending.clear();
      // Every pending node is in the graph; only those held from outside it are results to keep.
      graph.outputs.clear();
      wiring.outputs.clear();
      launched = launch_kept(std::move(graph), std::move(wiring), reason, loc, is_blocking(reason));
    }
  }
  finish_launches(std::move(launched));
  if (reason != EvaluationReason::WaitAll) return;
  {
    support::trace::Span span("wait", "waitall");
    span.arg("location", location_string(loc));
    runtime::synchronize_all_streams();
    runtime::synchronize_cuda_devices();
  }
  if (current_settings().log_level != LogLevel::Off) {
    std::fprintf(stderr, "[lazuli] waitall at %s: every stream is idle\n",
                 location_string(loc).c_str());
  }
  if (std::exception_ptr earliest = take_earliest_failure()) {
    std::rethrow_exception(earliest);
  }
}

LZ_HOT_PATH void after_recording(const ir::NodePtr& node) {
  if (engine() == Engine::Sync) {
    evaluate({node}, EvaluationReason::SyncEngine, node->location);
    return;
  }
  const int64_t budget = max_pending_nodes();
  if (budget > 0 && ir::PendingList::global().size() > budget) {
    evaluate_all(EvaluationReason::NodeBudget, node->location);
  }
}

std::lock_guard<std::mutex> lock_graph() { return std::lock_guard<std::mutex>(graph_mutex); }

bool is_computed(const ir::NodePtr& node) {
  std::lock_guard lock(graph_mutex);
  return node->is_evaluated() && node->buffer->is_computed();
}

std::string describe_pending(std::vector<ir::NodePtr> roots,
                             std::string (*describe)(const ir::Graph&)) {
  std::lock_guard lock(graph_mutex);
  return describe(ir::Graph::collect(roots));
}

}  // namespace lz::frontend

namespace lz {

const char* evaluation_reason_name(EvaluationReason reason) {
  switch (reason) {
    case EvaluationReason::Item: return "item";
    case EvaluationReason::ToVector: return "to_vector";
    case EvaluationReason::Read: return "read";
    case EvaluationReason::Print: return "print";
    case EvaluationReason::WaitToRead: return "wait_to_read";
    case EvaluationReason::WaitAll: return "waitall";
    case EvaluationReason::EvalAsync: return "eval_async";
    case EvaluationReason::NodeBudget: return "node_budget";
    case EvaluationReason::SyncEngine: return "sync_engine";
  }
  return "?";
}

InterruptibleWaits::InterruptibleWaits(std::function<void()> check, std::chrono::milliseconds slice)
    : check_(std::move(check)) {
  memory::WaitCheck& installed = memory::thread_wait_check();
  previous_check_ = installed.check;
  previous_slice_ = installed.slice;
  installed = {&check_, slice};
}

InterruptibleWaits::~InterruptibleWaits() {
  memory::thread_wait_check() = {previous_check_, previous_slice_};
}

EvaluationRecord last_evaluation() {
  std::lock_guard lock(frontend::graph_mutex);
  return frontend::last_launch_record();
}

void waitall(std::source_location loc) try {
  frontend::evaluate_all(EvaluationReason::WaitAll, loc);
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

void eval_async(const std::vector<Tensor>& tensors, std::source_location loc) try {
  std::vector<ir::NodePtr> roots;
  for (const Tensor& tensor : tensors) roots.push_back(frontend::node_of(tensor, "eval_async"));
  frontend::evaluate(std::move(roots), EvaluationReason::EvalAsync, loc);
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

}  // namespace lz
