#include "frontend/evaluation_records.h"

#include <mutex>

namespace lz::frontend {
namespace {

/// The record of the latest evaluation, written once its passes have run (outside the graph
/// lock).
struct LatestRecord {
  std::mutex mutex;
  EvaluationRecord record;
};
LatestRecord& latest_record() {
  static auto* latest = new LatestRecord();  // never destroyed: launches run at exit
  return *latest;
}

/// The wall time of the evaluation that finished last, written by the thread that ran it (which
/// holds no graph lock) before its readers wake up.
struct FinishedEvaluation {
  std::mutex mutex;
  uint64_t number = 0;
  double milliseconds = 0;
};
FinishedEvaluation& last_finished() {
  static auto* finished = new FinishedEvaluation();  // never destroyed: launches run at exit
  return *finished;
}

}  // namespace

void set_latest_record(const EvaluationRecord& record) {
  LatestRecord& latest = latest_record();
  std::lock_guard lock(latest.mutex);
  if (record.number >= latest.record.number) latest.record = record;
}

void set_last_finished(uint64_t number, double milliseconds) {
  FinishedEvaluation& finished = last_finished();
  std::lock_guard lock(finished.mutex);
  finished.number = number;
  finished.milliseconds = milliseconds;
}

EvaluationRecord last_launch_record() {
  EvaluationRecord record;
  {
    LatestRecord& latest = latest_record();
    std::lock_guard lock(latest.mutex);
    record = latest.record;
  }
  FinishedEvaluation& finished = last_finished();
  std::lock_guard lock(finished.mutex);
  if (finished.number == record.number) record.milliseconds = finished.milliseconds;
  return record;
}

std::string location_string(std::source_location loc) {
  // operator<< cannot capture its caller's location; it passes a default-constructed one.
  if (loc.file_name()[0] == '\0') return "operator<<";
  return std::string(loc.file_name()) + ":" + std::to_string(loc.line());
}

}  // namespace lz::frontend
