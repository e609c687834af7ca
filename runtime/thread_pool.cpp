#include "runtime/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <iostream>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#include "support/environment.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace lz::runtime {
namespace {

// About 50 microseconds of polling: long enough to bridge the gap between two kernels of one
// evaluation, short enough that an idle pool stops using the CPU almost at once.
constexpr int kSpinIterations = 2000;

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

int hardware_threads() {
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

int default_thread_count() {
  if (const auto threads =
          support::integer_from_environment("LZ_NUM_THREADS", 1, max_thread_count())) {
    return static_cast<int>(*threads);
  }
  return hardware_threads();
}

// 0 until the first thread_count(); set_thread_count() stores into it directly.
std::atomic<int> configured_thread_count{0};

// True on the pool's workers, and on a caller while its chunks run: a parallel_for there is
// nested and runs inline (waiting for the pool from inside the pool would deadlock).
thread_local bool inside_parallel_for = false;

/// One parallel_for call: its chunks and the first error. Lives on the caller's stack.
class Job {
 public:
  Job(int64_t count, int64_t chunks, detail::RangeFunction function, void* body)
      : count_(count), chunks_(chunks), function_(function), body_(body) {}

  /// Claims and runs chunks until none is left.
  void run_chunks() {
    for (int64_t chunk = next_chunk_.fetch_add(1, std::memory_order_relaxed); chunk < chunks_;
         chunk = next_chunk_.fetch_add(1, std::memory_order_relaxed)) {
      if (!failed_.load(std::memory_order_relaxed)) {
        try {
          function_(body_, count_ * chunk / chunks_, count_ * (chunk + 1) / chunks_);
        } catch (...) {
          std::lock_guard lock(error_mutex_);
          if (!error_) error_ = std::current_exception();
          failed_.store(true, std::memory_order_relaxed);
        }
      }
      finished_chunks_.fetch_add(1, std::memory_order_release);
    }
  }

  bool all_chunks_finished() const {
    return finished_chunks_.load(std::memory_order_acquire) == chunks_;
  }

  /// Only after every participant has left the job.
  void rethrow_error() const {
    if (error_) std::rethrow_exception(error_);
  }

 private:
  const int64_t count_;
  const int64_t chunks_;
  const detail::RangeFunction function_;
  void* const body_;
  std::atomic<int64_t> next_chunk_{0};
  std::atomic<int64_t> finished_chunks_{0};
  std::atomic<bool> failed_{false};
  std::mutex error_mutex_;
  std::exception_ptr error_;
};

class ThreadPool {
 public:
  ThreadPool() = default;
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  /// Runs the job's chunks on the caller and `threads - 1` workers (restarted when that changes;
  /// fewer when the system refuses to start more threads).
  void run(int threads, Job& job) {
    std::lock_guard submit(submit_mutex_);
    if (workers_wanted_ != threads - 1) {
      stop_workers();
      start_workers(threads - 1);
    }
    {
      std::lock_guard lock(mutex_);
      job_ = &job;
      generation_.fetch_add(1, std::memory_order_release);
    }
    work_ready_.notify_all();

    inside_parallel_for = true;
    job.run_chunks();
    inside_parallel_for = false;

    for (int spin = 0; spin < kSpinIterations && !job.all_chunks_finished(); ++spin) cpu_relax();
    std::unique_lock lock(mutex_);
    job_ = nullptr;  // a worker that wakes up from now on finds no job and sleeps again
    all_workers_left_.wait(lock, [this] { return workers_in_job_ == 0; });
  }

 private:
  void start_workers(int count) {
    {
      std::lock_guard lock(mutex_);
      stopping_ = false;
    }
    // A worker waits for the generation after this one: read here, not in the new thread, which
    // may start only after the job it is meant to join has been published.
    const uint64_t generation = generation_.load(std::memory_order_relaxed);
    workers_wanted_ = count;
    workers_.reserve(count);
    try {
      for (int i = 0; i < count; ++i) {
        workers_.emplace_back([this, generation] { work(generation); });
      }
    } catch (const std::system_error& error) {
      // Kernels are correct on any number of threads: run on those that started.
      std::cerr << "[lazuli] started " << workers_.size() + 1 << " of the " << count + 1
                << " threads kernels run on (" << error.what()
                << "; the process or user may be at its thread limit, RLIMIT_NPROC)\n";
    }
  }

  void stop_workers() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    work_ready_.notify_all();
    for (std::thread& worker : workers_) worker.join();
    workers_.clear();
  }

  void work(uint64_t seen_generation) {
    inside_parallel_for = true;
    for (;;) {
      for (int spin = 0;
           spin < kSpinIterations && generation_.load(std::memory_order_acquire) == seen_generation;
           ++spin) {
        cpu_relax();
      }
      Job* job = nullptr;
      {
        std::unique_lock lock(mutex_);
        work_ready_.wait(lock, [&] {
          return stopping_ || generation_.load(std::memory_order_relaxed) != seen_generation;
        });
        if (stopping_) return;
        seen_generation = generation_.load(std::memory_order_relaxed);
        job = job_;
        if (job == nullptr) continue;
        ++workers_in_job_;
      }
      job->run_chunks();
      bool last = false;
      {
        std::lock_guard lock(mutex_);
        last = --workers_in_job_ == 0;
      }
      if (last) all_workers_left_.notify_one();
    }
  }

  std::mutex submit_mutex_;  // one job at a time; guards workers_ and workers_wanted_
  std::vector<std::thread> workers_;
  int workers_wanted_ = 0;  // what the thread count asked for; workers_ may hold fewer

  std::mutex mutex_;  // guards job_, workers_in_job_, stopping_ and writes of generation_
  std::condition_variable work_ready_;
  std::condition_variable all_workers_left_;
  std::atomic<uint64_t> generation_{0};  // atomic so that workers can poll it without the mutex
  Job* job_ = nullptr;
  int workers_in_job_ = 0;
  bool stopping_ = false;
};

ThreadPool& pool() {
  // Never destroyed: work still queued on the streams at exit runs after static destructors
  // may have begun (runtime/devices.cpp), and its kernels still split across the pool.
  static auto* instance = new ThreadPool();
  return *instance;
}

}  // namespace

int thread_count() {
  int count = configured_thread_count.load(std::memory_order_relaxed);
  if (count > 0) return count;
  int expected = 0;
  configured_thread_count.compare_exchange_strong(expected, default_thread_count(),
                                                  std::memory_order_relaxed);
  return configured_thread_count.load(std::memory_order_relaxed);
}

int max_thread_count() {
  constexpr int kThreadsPerCore = 8;
  constexpr int kFewest = 64;
  return std::max(kFewest, kThreadsPerCore * hardware_threads());
}

void set_thread_count(int count) {
  configured_thread_count.store(
      count > 0 ? std::min(count, max_thread_count()) : default_thread_count(),
      std::memory_order_relaxed);
}

namespace detail {

void parallel_for(int64_t count, int64_t grain, RangeFunction function, void* body) {
  if (count <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  const int threads = thread_count();
  const int64_t chunks = std::min<int64_t>(threads, count / grain);
  if (chunks <= 1 || inside_parallel_for) {
    function(body, 0, count);
    return;
  }
  Job job(count, chunks, function, body);
  pool().run(threads, job);
  job.rethrow_error();
}

}  // namespace detail
}  // namespace lz::runtime
