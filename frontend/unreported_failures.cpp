#include "frontend/unreported_failures.h"

#include <algorithm>
#include <mutex>
#include <vector>

namespace lz::frontend {
namespace {

/// Failures of launched work that no blocking point has raised yet; waitall raises the earliest.
class UnreportedFailures {
 public:
  void add(const std::exception_ptr& error) {
    std::lock_guard lock(mutex_);
    // waitall raises the earliest; past the bound, a program that never waits keeps only the
    // earliest failures instead of every one it ever had.
    if (failures_.size() >= kMaxKept) return;
    if (std::find(failures_.begin(), failures_.end(), error) == failures_.end()) {
      failures_.push_back(error);
    }
  }
  void forget(const std::exception_ptr& error) {
    std::lock_guard lock(mutex_);
    std::erase(failures_, error);
  }
  /// The earliest failure, forgetting them all; null when there was none.
  std::exception_ptr take_earliest() {
    std::lock_guard lock(mutex_);
    std::exception_ptr earliest = failures_.empty() ? nullptr : failures_.front();
    failures_.clear();
    return earliest;
  }

 private:
  static constexpr size_t kMaxKept = 1024;
  std::mutex mutex_;
  std::vector<std::exception_ptr> failures_;
};

UnreportedFailures& unreported_failures() {
  static auto* failures = new UnreportedFailures();  // launched work may end after main returns
  return *failures;
}

}  // namespace

void add_unreported_failure(const std::exception_ptr& error) { unreported_failures().add(error); }

void forget_failure(const std::exception_ptr& error) { unreported_failures().forget(error); }

std::exception_ptr take_earliest_failure() { return unreported_failures().take_earliest(); }

}  // namespace lz::frontend
