#include "timing.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace lazuli_bench {

double median_milliseconds(int warmup, int repeat, const std::function<double()>& timed_run) {
  for (int i = 0; i < warmup; ++i) timed_run();
  std::vector<double> times;
  times.reserve(repeat);
  for (int i = 0; i < repeat; ++i) times.push_back(timed_run());
  std::sort(times.begin(), times.end());
  const size_t middle = times.size() / 2;
  return times.size() % 2 == 1 ? times[middle] : (times[middle - 1] + times[middle]) / 2;
}

int thread_count() {
  if (const char* text = std::getenv("LZ_NUM_THREADS")) {
    int value = 0;
    const char* end = text + std::strlen(text);
    const auto [parsed_end, error] = std::from_chars(text, end, value);
    if (error == std::errc() && parsed_end == end && value > 0) return value;
  }
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

lz::Stats stats_difference(const lz::Stats& after, const lz::Stats& before) {
  lz::Stats difference;
  difference.evaluations = after.evaluations - before.evaluations;
  difference.nodes_evaluated = after.nodes_evaluated - before.nodes_evaluated;
  difference.kernels_launched = after.kernels_launched - before.kernels_launched;
  difference.kernels_compiled = after.kernels_compiled - before.kernels_compiled;
  difference.cache_hits = after.cache_hits - before.cache_hits;
  difference.cache_misses = after.cache_misses - before.cache_misses;
  difference.bytes_allocated = after.bytes_allocated - before.bytes_allocated;
  return difference;
}

}  // namespace lazuli_bench
