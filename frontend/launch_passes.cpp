#include "frontend/launch_passes.h"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "frontend/evaluation_dumps.h"
#include "frontend/evaluation_log.h"
#include "frontend/evaluation_records.h"
#include "frontend/launch_state.h"
#include "support/statistics.h"

namespace lz::frontend {
namespace {

/// The pass pipeline for one launch: the disabled passes, and, when dumping (LZ_DUMP), the
/// analyses and an observer that dumps each stage. Sets where the compiled kernels are dumped.
/// (Each pass is a trace span of its own: passes/pass_manager.cpp.)
passes::PassManager configure_passes(const Settings& settings, const EvaluationRecord& record,
                                     runtime::ExecutionOptions& execution) {
  const bool dumping = !settings.dump_directory.empty();
  passes::PassManager manager(dumping ? passes::with_analyses(passes::kDefaultPipeline)
                                      : std::string(passes::kDefaultPipeline));
  for (const std::string& name : settings.disabled_passes) manager.disable(name);
  if (dumping) {
    char folder[48];
    std::snprintf(folder, sizeof(folder), "%04llu.%s",
                  static_cast<unsigned long long>(record.number),
                  evaluation_reason_name(record.reason));
    const std::filesystem::path folder_path =
        std::filesystem::path(settings.dump_directory) / folder;
    manager.set_observer(dump_passes(folder_path, settings.dump_passes));
    // The compiled kernels' IR and assembly count as the stage "codegen" for LZ_DUMP_PASSES.
    if (std::regex_match("codegen", std::regex(settings.dump_passes))) {
      execution.dump_directory = folder_path.string();
    }
  }
  return manager;
}

/// What names the passes configure_passes runs without dumping: with the pass options, what a
/// plan cache entry is for.
std::string pipeline_key(const Settings& settings) {
  std::string key = std::string(passes::kDefaultPipeline) + " without";
  for (const std::string& name : settings.disabled_passes) key += " " + name;
  return key;
}

}  // namespace

passes::PlanCache& plan_cache() {
  static auto* cache = new passes::PlanCache();  // never destroyed: launches run at exit
  return *cache;
}

void look_up_plan(Launch& launch, const ir::Graph& graph, const ir::Wiring& wiring) {
  const Settings& settings = launch.settings;
  const EvaluationRecord& record = launch.record;
  passes::PassOptions options;
  options.fusion = settings.fusion;
  // Dumps show every pass, so dumping runs them every time.
  const bool cached = settings.plan_cache && settings.dump_directory.empty();
  try {
    launch.lookup = cached ? plan_cache().look_up(graph, wiring, pipeline_key(settings), options)
                           : passes::PlanCache::uncached(graph, options);
    if (!launch.lookup->hit()) {
      launch.manager.emplace(configure_passes(settings, record, launch.options));
    }
  } catch (const std::exception& error) {
    // Nothing was launched: every node stays pending, and the failure is on record.
    log_failure(settings, record, error);
    set_latest_record(record);
    launch.abandon(std::current_exception());
    throw;
  }
  if (cached) {
    launch.plan = launch.lookup->hit() ? "hit" : "miss";
    (launch.lookup->hit() ? support::counters().plan_hits : support::counters().plan_misses)
        .fetch_add(1, std::memory_order_relaxed);
  }
}

}  // namespace lz::frontend
