#include "frontend/launch.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "frontend/evaluation.h"
#include "frontend/evaluation_dumps.h"
#include "frontend/evaluation_log.h"
#include "frontend/evaluation_records.h"
#include "frontend/in_flight.h"
#include "frontend/kept_results.h"
#include "frontend/launch_passes.h"
#include "frontend/launch_state.h"
#include "frontend/settings.h"
#include "frontend/unreported_failures.h"
#include "ir/matmul_shape.h"
#include "ir/pending_list.h"
#include "lazuli/error.h"
#include "memory/wait_check.h"
#include "plan/fusion_plan.h"
#include "runtime/cpu/blas_matmul.h"
#include "runtime/devices.h"
#include "runtime/kernel_executor.h"
#include "support/statistics.h"
#include "support/trace.h"

namespace lz::frontend {
namespace {

uint64_t evaluation_count = 0;  // guarded by the graph lock

/// Computes a launch's outputs; a failure of the executor's own bookkeeping fails them all.
std::vector<runtime::Outcome> compute(Launch& launch) {
  support::trace::Span span("run", "evaluation");
  span.arg("number", static_cast<int64_t>(launch.record.number));
  span.flow_in(launch.flow);
  try {
    return runtime::execute_each(launch.context.graph, launch.context.fusion.get(), launch.options);
  } catch (...) {
    return std::vector<runtime::Outcome>(launch.promises.size(),
                                         {nullptr, std::current_exception()});
  }
}

/// Fulfils or fails each promise with its outcome; returns how many failed.
int publish(Launch& launch, std::vector<runtime::Outcome> outcomes) {
  // A failure read from an input computed by an earlier launch was reported there (and maybe
  // raised already); only this launch's own failures are new.
  std::vector<std::exception_ptr> inherited;
  for (const ir::NodePtr& node : launch.context.graph.nodes) {
    if (node->is_evaluated() && node->buffer->error()) inherited.push_back(node->buffer->error());
  }
  int failed = 0;
  for (size_t i = 0; i < outcomes.size(); ++i) {
    if (outcomes[i].error) {
      launch.promises[i]->fail(outcomes[i].error);
      // Nobody can read a cancelled result, nor ever learn of it: it is no failure to report.
      if (!outcomes[i].cancelled &&
          std::find(inherited.begin(), inherited.end(), outcomes[i].error) == inherited.end()) {
        add_unreported_failure(outcomes[i].error);
      }
      ++failed;
    } else {
      launch.promises[i]->fulfil(std::move(outcomes[i].buffer));
    }
  }
  return failed;
}

/// Runs a launch on its stream's thread (or on a caller that claimed the stream): computes the
/// outputs, fulfils or fails their promised buffers, then sets the event readers wait for.
void run_launch(Launch& launch) noexcept {
  const auto start = std::chrono::steady_clock::now();
  if (launch.options.log_level != LogLevel::Off) memory::Buffer::restart_peak_live_bytes();
  try {
    std::vector<runtime::Outcome> outcomes = compute(launch);
    const bool cancelled = !outcomes.empty() && outcomes.front().cancelled;
    const int failed = publish(launch, std::move(outcomes));
    if (launch.options.log_level != LogLevel::Off) {
      const std::string failures = cancelled
                                       ? ", cancelled: no tensor could read its results any more"
                                   : failed > 0 ? ", " + std::to_string(failed) + " results failed"
                                                : std::string();
      constexpr double kMiB = 1 << 20;
      std::fprintf(
          stderr,
          "[lazuli] evaluation %llu ran on %s stream %d: %.3fms, peak %.1f MiB of host buffers%s\n",
          static_cast<unsigned long long>(launch.record.number), launch.device.name().c_str(),
          launch.stream,
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count(),
          static_cast<double>(memory::Buffer::peak_live_bytes()) / kMiB, failures.c_str());
    }
  } catch (...) {  // out of memory in the bookkeeping: what is not published yet fails
    launch.abandon(std::current_exception());
    return;
  }
  const double milliseconds =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - launch.started)
          .count();
  set_last_finished(launch.record.number, milliseconds);
  // The graph and the buffers only it holds go before readers wake up; a plan cache hit's
  // graph goes back to the cache, for the next hit of its structure.
  const std::shared_ptr<memory::Event> done = launch.done;
  plan_cache().give_back(std::move(launch.origin), std::move(launch.context));
  launch.context = passes::PassContext(ir::Graph{});
  launch.promises.clear();
  done->set();
}

/// Whether the launching thread may run `graph` itself: always, unless its waits can be
/// interrupted (lz::InterruptibleWaits) and the graph is not small, which then runs on its stream
/// so that the wait for it can be interrupted.
bool may_run_on_caller(const ir::Graph& graph) {
  if (memory::thread_wait_check().check == nullptr) return true;
  constexpr int64_t kSmallWork = int64_t{1} << 22;  // element operations: a few milliseconds
  int64_t work = 0;
  for (const ir::NodePtr& node : graph.nodes) {
    if (node->is_evaluated()) continue;
    work += node->size() * (node->op == ir::Op::MatMul ? ir::MatmulShape::of(*node).k : 1);
    if (work > kSmallWork) return false;
  }
  return true;
}

runtime::Stream& stream_of(const Launch& launch) {
  return runtime::device_stream(launch.device, launch.stream);
}

/// Starts the launch of the pending work behind `graph`, whose outputs are the results to keep,
/// all on one device: looks its structure up in the plan cache (on a miss, builds the passes,
/// so that a pipeline that cannot be built fails with nothing changed), gives the outputs
/// promised buffers (they become data leaves at once), and takes the launch's slot on the
/// device's stream, or the whole stream when `claim` is set, it is idle and may_run_on_caller
/// allows it. The slot waits for prepare_launch, which runs the passes outside the graph lock.
/// Called under the graph lock.
std::shared_ptr<Launch> launch(ir::Graph graph, const ir::Wiring& wiring, Device device,
                               EvaluationReason reason, std::source_location loc, bool claim,
                               int64_t left_pending) {
  const auto start = std::chrono::steady_clock::now();
  claim = claim && may_run_on_caller(graph);
  auto launched = std::make_shared<Launch>();
  Settings& settings = launched->settings;
  settings = current_settings();
  EvaluationRecord& record = launched->record;
  record.number = ++evaluation_count;
  record.reason = reason;
  record.location = location_string(loc);
  record.left_pending = left_pending;
  for (const ir::NodePtr& node : graph.nodes) {
    if (node->is_evaluated()) continue;
    ++record.nodes;
    if (node->op == ir::Op::MatMul && device.kind() == Device::Kind::Cpu) {
      runtime::load_matmul_libraries(*node);
    }
  }
  if (!settings.dump_directory.empty()) dump_graph(settings.dump_directory, graph, record);
  support::trace::Span span("launch", "evaluation");
  span.arg("number", static_cast<int64_t>(record.number));
  span.arg("reason", evaluation_reason_name(reason));
  span.arg("location", record.location);

  runtime::ExecutionOptions& execution = launched->options;
  execution.jit = settings.jit;
  execution.jit_strict = settings.jit_strict;
  execution.cache_directory = settings.cache_directory;
  execution.log_level = settings.log_level;
  if (!settings.in_place) execution.in_place_from_bytes = -1;
  // The promises are held by the launch and by the nodes they became: once only the launch
  // holds them, no tensor (and no later launch) can read them, and the rest is not run. So a
  // program that drops its results, or ends, does not wait for them. A promise nobody holds
  // stays so, so each call goes on from the first one still held: over a whole launch, every
  // promise is looked at about once, not once per kernel.
  execution.unread = [launch = launched.get(), first_held = size_t{0}]() mutable {
    const auto& promises = launch->promises;
    while (first_held < promises.size() && promises[first_held].use_count() == 1) ++first_held;
    return first_held == promises.size();
  };
  look_up_plan(*launched, graph, wiring);

  // What may still fail (allocating, starting the stream's worker) happens before any node
  // changes; once the outputs hold the promises, a failure to queue fails the promises instead.
  launched->promises.reserve(graph.outputs.size());
  for (const ir::NodePtr& output : graph.outputs) {
    launched->promises.push_back(
        memory::Buffer::promise(output->dtype, output->size(), launched->done));
  }
  launched->started = start;
  launched->device = device;
  launched->stream = current_stream();
  execution.device = device;
  execution.stream = launched->stream;
  launched->flow = support::trace::new_flow_id();
  runtime::Stream& stream = stream_of(*launched);
  span.flow_out(launched->flow);
  support::counters().evaluations.fetch_add(1, std::memory_order_relaxed);
  support::counters().nodes_evaluated.fetch_add(record.nodes, std::memory_order_relaxed);

  for (size_t i = 0; i < graph.outputs.size(); ++i) {
    ir::PendingList::global().remove(graph.outputs[i].get());
    graph.outputs[i]->become_data(launched->promises[i]);
  }
  try {
    add_in_flight(*launched);
    if (claim && stream.claim_if_idle()) {
      launched->claimed = true;
    } else {
      stream.submit([launched] {
        launched->prepared->wait();
        if (!launched->done->is_set()) run_launch(*launched);
      });
    }
  } catch (...) {
    launched->abandon(std::current_exception());
    throw;
  }
  return launched;
}

/// Runs the passes of a launch (or takes the plan cache's hit), outside the graph lock, then
/// logs it and lets its stream's slot run it. A failure of the passes fails its promises and is
/// thrown.
void prepare_launch(Launch& launch) {
  support::trace::Span span("prepare", "evaluation");
  span.arg("number", static_cast<int64_t>(launch.record.number));
  try {
    launch.origin = passes::PlanCache::origin_of(*launch.lookup);
    launch.context = plan_cache().complete(
        std::move(*launch.lookup),
        [&launch](passes::PassContext& context) { launch.manager->run(context); });
  } catch (const std::exception& error) {
    log_failure(launch.settings, launch.record, error);
    set_latest_record(launch.record);
    launch.abandon(std::current_exception());
    throw;
  }
  launch.lookup.reset();
  EvaluationRecord& record = launch.record;
  const passes::PassContext& context = launch.context;
  record.kernels =
      context.fusion ? static_cast<int64_t>(context.fusion->kernels.size()) : record.nodes;
  record.prepare_milliseconds =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - launch.started)
          .count();
  log_launch(launch.settings, launch, launch.plan, launch.manager ? &*launch.manager : nullptr);
  set_latest_record(record);
  launch.prepared->set();
}

}  // namespace

std::vector<std::shared_ptr<Launch>> launch_kept(ir::Graph graph, ir::Wiring wiring,
                                                 EvaluationReason reason, std::source_location loc,
                                                 bool claim) {
  const KeptResults kept = results_to_keep(graph, wiring);
  const std::vector<bool>& keep = kept.keep;
  for (ir::Node* node : kept.left) node->left_pending = true;
  std::vector<std::pair<Device, std::vector<ir::NodePtr>>> by_device;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const ir::NodePtr& node = graph.nodes[i];
    if (!keep[i] || node->is_evaluated()) continue;
    auto group = std::find_if(by_device.begin(), by_device.end(),
                              [&](const auto& entry) { return entry.first == node->device; });
    if (group == by_device.end()) group = by_device.insert(by_device.end(), {node->device, {}});
    group->second.push_back(node);
  }
  std::vector<std::shared_ptr<Launch>> launches;
  try {
    if (by_device.size() == 1 && only_kept_results_need(graph, wiring, keep)) {
      // The graph collected from the kept results would have the same nodes: launch this one.
      auto& [device, outputs] = by_device.front();
      wiring.outputs.clear();
      for (size_t i = 0; i < graph.nodes.size(); ++i) {
        if (keep[i] && !graph.nodes[i]->is_evaluated()) {
          wiring.outputs.push_back(static_cast<int32_t>(i));
        }
      }
      graph.outputs = std::move(outputs);
      launches.push_back(launch(std::move(graph), wiring, device, reason, loc, claim,
                                static_cast<int64_t>(kept.left.size())));
    } else {
      for (auto& [device, outputs] : by_device) {
        // Only pending nodes of this device are reached: ops never mix devices, and a tensor
        // moved with to() is a data leaf on the other side. (Scalar constants have no device of
        // their own and are computed wherever they are used.)
        ir::Wiring device_wiring;
        ir::Graph device_graph = ir::Graph::collect(outputs, &device_wiring);
        launches.push_back(launch(std::move(device_graph), device_wiring, device, reason, loc,
                                  claim && by_device.size() == 1,
                                  static_cast<int64_t>(kept.left.size())));
      }
    }
  } catch (...) {
    // The devices launched already hold stream slots: they fail, so that no slot waits forever.
    for (const std::shared_ptr<Launch>& launched : launches) {
      launched->abandon(std::current_exception());
      if (launched->claimed) stream_of(*launched).release();
    }
    throw;
  }
  return launches;
}

void finish_launches(std::vector<std::shared_ptr<Launch>> launches) {
  std::exception_ptr failure;
  for (const std::shared_ptr<Launch>& launched : launches) {
    try {
      prepare_launch(*launched);
    } catch (...) {
      if (!failure) failure = std::current_exception();
    }
  }
  for (const std::shared_ptr<Launch>& launched : launches) {
    if (!launched->claimed) continue;
    if (!launched->done->is_set()) {
      const memory::UninterruptedScope whole;  // the stream's work: not the caller's to stop
      run_launch(*launched);
    }
    stream_of(*launched).release();
  }
  if (failure) std::rethrow_exception(failure);
}

}  // namespace lz::frontend
