// Counters of what lazuli did, for tests, benchmarks and the log.
#pragma once

#include <cstdint>

namespace lz {

/// Counts since the start of the process or the last reset_stats().
struct Stats {
  int64_t evaluations = 0;           // forced evaluations of the pending graph
  int64_t nodes_evaluated = 0;       // recorded nodes computed by them
  int64_t kernels_launched = 0;      // kernels run (one per op with fusion off)
  int64_t kernels_cancelled = 0;     // kernels of launches nothing could read any more, not run
  int64_t kernels_compiled = 0;      // kernels compiled by the JIT (not those loaded from disk)
  int64_t kernels_interpreted = 0;   // kernels run by the reference interpreter (LZ_JIT)
  int64_t cache_hits = 0;            // kernel cache lookups that found code, in memory or on disk
  int64_t cache_misses = 0;          // and those that compiled
  int64_t bytes_allocated = 0;       // bytes of tensor buffers allocated
  int64_t disk_cache_hits = 0;       // the cache hits that loaded object code from LZ_CACHE_DIR
  int64_t compile_microseconds = 0;  // time spent lowering, compiling and loading kernels
  int64_t plan_hits = 0;             // evaluations that reused the passes' result (LZ_PLAN_CACHE)
  int64_t plan_misses = 0;           // and those that ran the passes
  int64_t collectives = 0;           // collectives this rank took part in (lz::dist)
  int64_t collective_bytes = 0;      // bytes of this rank's operands of them
  int64_t collective_wait_microseconds = 0;  // waiting for every rank to reach them
  int64_t collective_move_microseconds = 0;  // moving their data once all had
  int64_t outputs_written_in_place = 0;      // kernel outputs that took a dying input's memory
  // Levels, not counts: bytes of host tensor buffers alive now, and the most alive at once since
  // reset_stats() (which starts it over from bytes_in_use). A CUDA device's are
  // lz::cuda::memory_stats().
  int64_t bytes_in_use = 0;
  int64_t peak_bytes_in_use = 0;
};

Stats stats();
void reset_stats();

}  // namespace lz
