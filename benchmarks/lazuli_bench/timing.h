// How lazuli-bench measures: a wall clock, the median of repeated runs, the thread count every
// column uses, and lazuli's counters over a measured region.
#pragma once

#include <chrono>
#include <functional>

#include <lazuli/stats.h>

namespace lazuli_bench {

/// Wall time since construction.
class Stopwatch {
 public:
  Stopwatch() : start_(std::chrono::steady_clock::now()) {}
  double milliseconds() const {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_)
        .count();
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

/// Runs `timed_run` `warmup` times untimed, then `repeat` times, and returns the median of the
/// milliseconds the repeats return. Each run times itself, so that it can leave set-up and
/// tear-down (such as freeing the previous result) outside its clock.
double median_milliseconds(int warmup, int repeat, const std::function<double()>& timed_run);

/// LZ_NUM_THREADS when set to a positive integer, else the hardware concurrency: the threads
/// lazuli uses, given to OpenMP (the hand-written loops, Eigen) and to numpy's BLAS as well.
int thread_count();

/// after - before, counter by counter.
lz::Stats stats_difference(const lz::Stats& after, const lz::Stats& before);

}  // namespace lazuli_bench
