// The counters behind lz::stats(), updated by whichever part of lazuli does the counted work.
#pragma once

#include <atomic>
#include <cstdint>

namespace lz::support {

struct Counters {
  std::atomic<int64_t> evaluations{0};
  std::atomic<int64_t> nodes_evaluated{0};
  std::atomic<int64_t> kernels_launched{0};
  std::atomic<int64_t> kernels_cancelled{0};
  std::atomic<int64_t> kernels_compiled{0};
  std::atomic<int64_t> kernels_interpreted{0};
  std::atomic<int64_t> cache_hits{0};
  std::atomic<int64_t> cache_misses{0};
  std::atomic<int64_t> bytes_allocated{0};
  std::atomic<int64_t> disk_cache_hits{0};
  std::atomic<int64_t> compile_microseconds{0};
  std::atomic<int64_t> plan_hits{0};
  std::atomic<int64_t> plan_misses{0};
  std::atomic<int64_t> collectives{0};
  std::atomic<int64_t> collective_bytes{0};
  std::atomic<int64_t> collective_wait_microseconds{0};
  std::atomic<int64_t> collective_move_microseconds{0};
  std::atomic<int64_t> outputs_written_in_place{0};
  // Not counts but a level: bytes of host tensor buffers alive now (memory/buffer.cpp keeps it),
  // and the most alive at once since reset_stats().
  std::atomic<int64_t> bytes_in_use{0};
  std::atomic<int64_t> peak_bytes_in_use{0};
};

/// Raises `peak` to `value` when it is below (from any thread).
void raise_to(std::atomic<int64_t>& peak, int64_t value);

/// The process-wide counters (relaxed atomics: they are statistics, not synchronization).
Counters& counters();

}  // namespace lz::support
