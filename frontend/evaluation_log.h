// What an evaluation says under LZ_LOG once its passes have run, or when they fail.
#pragma once

#include <exception>

#include "frontend/settings.h"
#include "lazuli/inspect.h"
#include "passes/pass_manager.h"

namespace lz::frontend {

struct Launch;

/// Logs a launch whose passes have run (their times at LZ_LOG=debug). `plan`: where the passes'
/// result came from ("hit", "miss", or "off" without the plan cache); `manager`: the passes that
/// ran, null on a hit.
void log_launch(const Settings& settings, const Launch& launch, const char* plan,
                const passes::PassManager* manager);

/// Logs that the evaluation of `record` failed before it ran: its passes could not be built or
/// run.
void log_failure(const Settings& settings, const EvaluationRecord& record,
                 const std::exception& error);

}  // namespace lz::frontend
