// What a launch holds from its start under the graph lock to its run on its stream
// (frontend/launch.h starts and finishes launches).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "frontend/settings.h"
#include "lazuli/device.h"
#include "lazuli/error.h"
#include "lazuli/inspect.h"
#include "memory/buffer.h"
#include "memory/event.h"
#include "passes/pass_manager.h"
#include "passes/plan_cache.h"
#include "runtime/kernel_executor.h"

namespace lz::frontend {

/// One device's part of an evaluation: made under the graph lock with its promises and its
/// stream's slot, optimized outside it (prepare_launch), then run on that stream.
struct Launch {
  Launch() = default;
  Launch(const Launch&) = delete;
  Launch& operator=(const Launch&) = delete;
  /// A launch dropped before it ran (its queueing failed) fails its promises, so that nobody
  /// waits for them forever.
  ~Launch() {
    if (done->is_set()) return;
    abandon(std::make_exception_ptr(Error("evaluation " + std::to_string(record.number) + " at " +
                                          record.location + " was dropped before it ran")));
  }

  /// Fails every promise with `why` and sets the events, unless the launch has run already.
  void abandon(const std::exception_ptr& why) {
    if (done->is_set()) return;
    for (const auto& promise : promises) promise->fail(why);
    promises.clear();
    prepared->set();
    done->set();
  }

  // Until prepared: what the plan cache found, and the passes to run on a miss.
  std::optional<passes::PlanCache::Lookup> lookup;
  std::optional<passes::PassManager> manager;
  Settings settings;
  const char* plan = "off";  // for the log: plan cache "hit", "miss", or "off"
  /// Set once `context` is optimized: the stream's slot waits for it.
  std::shared_ptr<memory::Event> prepared = std::make_shared<memory::Event>();
  bool claimed = false;  // run by the launching thread instead of its stream's worker

  passes::PassContext context{ir::Graph{}};
  passes::PlanCache::Origin origin;  // where `context` came from, to give it back once run
  runtime::ExecutionOptions options;
  std::vector<std::shared_ptr<memory::Buffer>> promises;  // one per context.graph.outputs
  std::shared_ptr<memory::Event> done = std::make_shared<memory::Event>();
  EvaluationRecord record;
  std::chrono::steady_clock::time_point started;  // at the blocking point
  Device device = Device::cpu();
  int stream = 0;     // of the device: the launching thread's StreamScope
  uint64_t flow = 0;  // the trace's arrow from the launch to the run
};

}  // namespace lz::frontend
