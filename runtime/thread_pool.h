// A process-wide pool of worker threads that splits one kernel's index range across the CPU.
//
// The hand-off is designed for many short kernels in a row: a call publishes one job (a pointer
// and a generation counter under a mutex) and wakes the workers with a condition variable; the
// chunks are claimed with one atomic increment each; a worker spins briefly on the generation
// before it sleeps again, so the next kernel of an evaluation usually starts without a futex
// wake-up. Nothing is allocated per call: the body is passed as a pointer to the caller's
// callable, never copied into a std::function.
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>

namespace lz::runtime {

/// Threads a parallel_for uses, the calling thread included: LZ_NUM_THREADS (read at the first
/// call; a value that is not an integer in [1, max_thread_count()] is reported and ignored),
/// else the hardware's concurrency.
int thread_count();

/// The most threads lazuli will run a kernel on: 8 per core, and at least 64. Beyond that,
/// threads only cost memory and switching (LZ_NUM_THREADS=100000 once took 2.3 GB and failed).
int max_thread_count();

/// Overrides thread_count() for later calls (tests, benchmarks), capped at max_thread_count();
/// `count <= 0` restores the default, reading LZ_NUM_THREADS again. Safe while no parallel_for
/// runs.
void set_thread_count(int count);

namespace detail {
using RangeFunction = void (*)(void* body, int64_t begin, int64_t end);
void parallel_for(int64_t count, int64_t grain, RangeFunction function, void* body);
}  // namespace detail

/// Calls `body(begin, end)` on contiguous chunks that cover [0, count) exactly once, each of at
/// least `grain` elements, at most thread_count() of them, on the pool's workers and the calling
/// thread; returns when all are done. With `count <= grain` or one thread, it is one call of
/// `body(0, count)` on the calling thread (none if `count <= 0`). The body must not depend on how
/// the range is split.
///
/// The first exception a chunk throws is rethrown here once every started chunk has finished
/// (chunks not yet started are skipped). A parallel_for inside a body runs inline; calls from
/// several threads take turns.
template <class Body>
void parallel_for(int64_t count, int64_t grain, Body&& body) {
  using Callable = std::remove_reference_t<Body>;
  detail::parallel_for(
      count, grain,
      [](void* callable, int64_t begin, int64_t end) {
        (*static_cast<Callable*>(callable))(begin, end);
      },
      const_cast<void*>(static_cast<const void*>(&body)));
}

}  // namespace lz::runtime
