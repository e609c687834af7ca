// The records of evaluations that lz::last_evaluation() reports: the latest launched, and the wall
// time of the one that finished last.
#pragma once

#include <cstdint>
#include <source_location>
#include <string>

#include "lazuli/inspect.h"

namespace lz::frontend {

/// Keeps `record` as the latest unless a later evaluation's is there already.
void set_latest_record(const EvaluationRecord& record);

/// Notes the wall time of evaluation `number`, which has just finished, before its readers wake
/// up.
void set_last_finished(uint64_t number, double milliseconds);

/// The record of the latest launch (under the graph lock).
EvaluationRecord last_launch_record();

/// "file:line" of a user's call.
std::string location_string(std::source_location loc);

}  // namespace lz::frontend
