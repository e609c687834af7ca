#include "support/statistics.h"

#include "lazuli/stats.h"

#include <initializer_list>

namespace lz {
namespace support {

Counters& counters() {
  static Counters instance;
  return instance;
}

void raise_to(std::atomic<int64_t>& peak, int64_t value) {
  int64_t seen = peak.load(std::memory_order_relaxed);
  while (seen < value && !peak.compare_exchange_weak(seen, value, std::memory_order_relaxed)) {
  }
}

}  // namespace support

Stats stats() {
  const support::Counters& c = support::counters();
  constexpr auto relaxed = std::memory_order_relaxed;
  return {c.evaluations.load(relaxed),
          c.nodes_evaluated.load(relaxed),
          c.kernels_launched.load(relaxed),
          c.kernels_cancelled.load(relaxed),
          c.kernels_compiled.load(relaxed),
          c.kernels_interpreted.load(relaxed),
          c.cache_hits.load(relaxed),
          c.cache_misses.load(relaxed),
          c.bytes_allocated.load(relaxed),
          c.disk_cache_hits.load(relaxed),
          c.compile_microseconds.load(relaxed),
          c.plan_hits.load(relaxed),
          c.plan_misses.load(relaxed),
          c.collectives.load(relaxed),
          c.collective_bytes.load(relaxed),
          c.collective_wait_microseconds.load(relaxed),
          c.collective_move_microseconds.load(relaxed),
          c.outputs_written_in_place.load(relaxed),
          c.bytes_in_use.load(relaxed),
          c.peak_bytes_in_use.load(relaxed)};
}

void reset_stats() {
  support::Counters& c = support::counters();
  for (std::atomic<int64_t>* counter :
       {&c.evaluations, &c.nodes_evaluated, &c.kernels_launched, &c.kernels_cancelled,
        &c.kernels_compiled, &c.kernels_interpreted, &c.cache_hits, &c.cache_misses,
        &c.bytes_allocated, &c.outputs_written_in_place, &c.disk_cache_hits,
        &c.compile_microseconds, &c.plan_hits, &c.plan_misses, &c.collectives, &c.collective_bytes,
        &c.collective_wait_microseconds, &c.collective_move_microseconds}) {
    counter->store(0, std::memory_order_relaxed);
  }
  c.peak_bytes_in_use.store(c.bytes_in_use.load(std::memory_order_relaxed),
                            std::memory_order_relaxed);
}

}  // namespace lz
