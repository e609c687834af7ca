#include "frontend/evaluation_log.h"

#include <cstdio>
#include <string>
#include <vector>

#include "frontend/launch_state.h"
#include "lazuli/stats.h"

namespace lz::frontend {

void log_launch(const Settings& settings, const Launch& launch, const char* plan,
                const passes::PassManager* manager) {
  const EvaluationRecord& record = launch.record;
  if (settings.log_level != LogLevel::Off) {
    const std::string left_pending =
        record.left_pending == 0 ? ""
                                 : " left_pending=" + std::to_string(record.left_pending) +
                                       " (held intermediates, cheap to recompute, not written)";
    std::fprintf(stderr,
                 "[lazuli] evaluation %llu: %s at %s on %s nodes=%lld kernels=%lld plan=%s "
                 "prepare=%.3fms%s\n",
                 static_cast<unsigned long long>(record.number),
                 evaluation_reason_name(record.reason), record.location.c_str(),
                 launch.device.name().c_str(), static_cast<long long>(record.nodes),
                 static_cast<long long>(record.kernels), plan, record.prepare_milliseconds,
                 left_pending.c_str());
  }
  if (settings.log_level == LogLevel::Debug) {
    for (const passes::PassTiming& timing :
         manager ? manager->timings() : std::vector<passes::PassTiming>{}) {
      std::fprintf(stderr, "[lazuli]   pass %s: %.3f ms\n", timing.pass.c_str(),
                   timing.milliseconds);
    }
    const Stats totals = stats();
    std::fprintf(stderr,
                 "[lazuli]   totals: evaluations=%lld nodes=%lld kernels_launched=%lld "
                 "bytes_allocated=%lld\n",
                 static_cast<long long>(totals.evaluations),
                 static_cast<long long>(totals.nodes_evaluated),
                 static_cast<long long>(totals.kernels_launched),
                 static_cast<long long>(totals.bytes_allocated));
  }
}

void log_failure(const Settings& settings, const EvaluationRecord& record,
                 const std::exception& error) {
  if (settings.log_level != LogLevel::Off) {
    std::fprintf(stderr, "[lazuli] evaluation %llu: %s at %s failed: %s\n",
                 static_cast<unsigned long long>(record.number),
                 evaluation_reason_name(record.reason), record.location.c_str(), error.what());
  }
}

}  // namespace lz::frontend
