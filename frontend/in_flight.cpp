#include "frontend/in_flight.h"

#include <cstdint>
#include <cstdio>
#include <deque>
#include <memory>
#include <mutex>
#include <string>

#include "frontend/evaluation_records.h"
#include "frontend/launch_state.h"
#include "frontend/settings.h"
#include "memory/buffer.h"
#include "memory/event.h"
#include "support/trace.h"

namespace lz::frontend {
namespace {

/// Launched work not finished yet: the frontend waits for the oldest when there is too much of it.
class InFlight {
 public:
  void add(const Launch& launch) {
    std::lock_guard lock(mutex_);
    launches_.push_back(
        {launch.done, promised_bytes(launch), launch.record.nodes, launch.record.number});
  }

  /// Blocks until fewer than max_in_flight() launches are unfinished, their promised bytes are
  /// at most half the memory limit and their recorded nodes at most kMaxNodesInFlight; says in
  /// the log why it waited.
  void wait_for_room(std::source_location loc) {
    while (true) {
      Entry oldest;
      std::string why;
      {
        std::lock_guard lock(mutex_);
        std::erase_if(launches_, [](const Entry& entry) { return entry.done->is_set(); });
        if (launches_.empty()) return;
        int64_t bytes = 0;
        int64_t nodes = 0;
        for (const Entry& entry : launches_) {
          bytes += entry.bytes;
          nodes += entry.nodes;
        }
        const auto count = static_cast<int64_t>(launches_.size());
        if (count >= max_in_flight()) {
          why = std::to_string(count) +
                " evaluations in flight (LZ_MAX_IN_FLIGHT=" + std::to_string(max_in_flight()) + ")";
        } else if (bytes > memory::Buffer::memory_limit() / 2) {
          why = std::to_string(bytes) + " bytes of results in flight, over half of " +
                "LZ_MEMORY_LIMIT=" + std::to_string(memory::Buffer::memory_limit());
        } else if (nodes > kMaxNodesInFlight) {
          why = std::to_string(nodes) + " recorded nodes in flight (at most " +
                std::to_string(kMaxNodesInFlight) + ")";
        } else {
          return;
        }
        oldest = launches_.front();
      }
      if (current_settings().log_level != LogLevel::Off) {
        std::fprintf(stderr, "[lazuli] back-pressure at %s: %s; waiting for evaluation %llu\n",
                     location_string(loc).c_str(), why.c_str(),
                     static_cast<unsigned long long>(oldest.number));
      }
      support::trace::Span span("wait", "back-pressure");
      span.arg("why", why);
      oldest.done->wait();
    }
  }

 private:
  /// Each launch holds its optimized graph until it has run (a few hundred bytes a node): the
  /// launches of a loop that records faster than its stream computes would otherwise hold up
  /// to LZ_MAX_IN_FLIGHT graphs of LZ_MAX_PENDING_NODES nodes.
  static constexpr int64_t kMaxNodesInFlight = 100'000;

  struct Entry {
    std::shared_ptr<memory::Event> done;
    int64_t bytes = 0;
    int64_t nodes = 0;
    uint64_t number = 0;
  };

  static int64_t promised_bytes(const Launch& launch) {
    int64_t bytes = 0;
    for (const auto& promise : launch.promises) bytes += promise->bytes();
    return bytes;
  }

  std::mutex mutex_;
  std::deque<Entry> launches_;  // oldest first
};

InFlight& in_flight() {
  static auto* launches = new InFlight();
  return *launches;
}

}  // namespace

void add_in_flight(const Launch& launch) { in_flight().add(launch); }

void wait_for_room(std::source_location loc) { in_flight().wait_for_room(loc); }

}  // namespace lz::frontend
