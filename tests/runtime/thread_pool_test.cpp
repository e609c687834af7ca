#include "runtime/thread_pool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <numeric>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace lz::runtime {
namespace {

/// Restores the default thread count when a test ends.
class ThreadPoolTest : public ::testing::Test {
 protected:
  void TearDown() override { set_thread_count(0); }
};

/// How often parallel_for visited each index of [0, count).
std::vector<int> visits(int64_t count, int64_t grain) {
  std::vector<std::atomic<int>> counts(static_cast<size_t>(count));
  parallel_for(count, grain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) counts[i].fetch_add(1, std::memory_order_relaxed);
  });
  std::vector<int> result;
  result.reserve(counts.size());
  for (const std::atomic<int>& c : counts) result.push_back(c.load());
  return result;
}

TEST_F(ThreadPoolTest, ThreadCountsAreCappedAtEightPerCore) {
  const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  EXPECT_EQ(max_thread_count(), std::max(64, 8 * cores));
  set_thread_count(100000);
  EXPECT_EQ(thread_count(), max_thread_count());
  set_thread_count(3);
  EXPECT_EQ(thread_count(), 3);
}

TEST_F(ThreadPoolTest, TooManyThreadsFromTheEnvironmentAreReportedAndIgnored) {
  const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  setenv("LZ_NUM_THREADS", "100000", 1);
  testing::internal::CaptureStderr();
  set_thread_count(0);  // reads LZ_NUM_THREADS again
  const std::string message = testing::internal::GetCapturedStderr();
  unsetenv("LZ_NUM_THREADS");
  EXPECT_EQ(thread_count(), cores);
  EXPECT_EQ(message,
            "[lazuli] ignoring LZ_NUM_THREADS=100000; expected a whole number >= 1 and "
            "<= " +
                std::to_string(max_thread_count()) + "\n");
}

TEST_F(ThreadPoolTest, EveryIndexIsVisitedExactlyOnce) {
  for (int threads : {1, 2, 3, 8}) {
    set_thread_count(threads);
    for (int64_t count : {int64_t{0}, int64_t{1}, int64_t{7}, int64_t{1000}, int64_t{1000000}}) {
      for (int64_t grain : {int64_t{0}, int64_t{1}, int64_t{3}, int64_t{64}, int64_t{1} << 40}) {
        const std::vector<int> counts = visits(count, grain);
        const auto wrong = std::find_if(counts.begin(), counts.end(), [](int c) { return c != 1; });
        ASSERT_TRUE(wrong == counts.end())
            << "threads " << threads << ", count " << count << ", grain " << grain << ": index "
            << (wrong - counts.begin()) << " visited " << *wrong << " times";
      }
    }
  }
}

/// The [begin, end) ranges of one parallel_for, sorted.
std::vector<std::pair<int64_t, int64_t>> chunks_of(int64_t count, int64_t grain) {
  std::mutex mutex;
  std::vector<std::pair<int64_t, int64_t>> chunks;
  parallel_for(count, grain, [&](int64_t begin, int64_t end) {
    std::lock_guard lock(mutex);
    chunks.emplace_back(begin, end);
  });
  std::sort(chunks.begin(), chunks.end());
  return chunks;
}

TEST_F(ThreadPoolTest, ChunksAreContiguousAtLeastGrainAndAtMostOnePerThread) {
  set_thread_count(4);
  // 100 elements in chunks of at least 30: three chunks, not four.
  const auto chunks = chunks_of(100, 30);
  ASSERT_EQ(chunks.size(), 3u);
  EXPECT_EQ(chunks.front().first, 0);
  EXPECT_EQ(chunks.back().second, 100);
  for (size_t i = 0; i < chunks.size(); ++i) {
    EXPECT_GE(chunks[i].second - chunks[i].first, 30);
    if (i > 0) {
      EXPECT_EQ(chunks[i].first, chunks[i - 1].second);
    }
  }
  EXPECT_EQ(chunks_of(1000, 1).size(), 4u);
}

TEST_F(ThreadPoolTest, SmallRangeIsOneCallOnTheCallingThread) {
  set_thread_count(4);
  std::vector<std::pair<int64_t, int64_t>> calls;
  std::thread::id thread;
  parallel_for(50, 50, [&](int64_t begin, int64_t end) {
    calls.emplace_back(begin, end);
    thread = std::this_thread::get_id();
  });
  EXPECT_EQ(calls, (std::vector<std::pair<int64_t, int64_t>>{{0, 50}}));
  EXPECT_EQ(thread, std::this_thread::get_id());
}

TEST_F(ThreadPoolTest, OneThreadRunsEverythingOnTheCallingThread) {
  set_thread_count(1);
  std::vector<std::pair<int64_t, int64_t>> calls;
  std::set<std::thread::id> threads;
  parallel_for(1000000, 1, [&](int64_t begin, int64_t end) {
    calls.emplace_back(begin, end);
    threads.insert(std::this_thread::get_id());
  });
  EXPECT_EQ(calls, (std::vector<std::pair<int64_t, int64_t>>{{0, 1000000}}));
  EXPECT_EQ(threads, std::set<std::thread::id>{std::this_thread::get_id()});
}

TEST_F(ThreadPoolTest, ManyThreadsUseTheWorkers) {
  set_thread_count(4);
  // Each chunk waits until all four have started, so they must run on four threads at once.
  std::mutex mutex;
  std::set<std::thread::id> threads;
  std::atomic<int> started{0};
  parallel_for(4, 1, [&](int64_t, int64_t) {
    started.fetch_add(1);
    while (started.load() < 4) std::this_thread::yield();
    std::lock_guard lock(mutex);
    threads.insert(std::this_thread::get_id());
  });
  EXPECT_EQ(threads.size(), 4u);
  EXPECT_TRUE(threads.count(std::this_thread::get_id()));
}

/// out[i] = f(in[i]) with an order-independent f, computed with `threads` threads.
std::vector<double> transform_with(int threads, const std::vector<double>& input) {
  set_thread_count(threads);
  std::vector<double> output(input.size());
  parallel_for(static_cast<int64_t>(input.size()), 1000, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) output[i] = input[i] * input[i] - 3.0 * input[i] + 1.0;
  });
  return output;
}

TEST_F(ThreadPoolTest, ResultsAreIdenticalForOneAndManyThreads) {
  std::vector<double> input(1000003);
  for (size_t i = 0; i < input.size(); ++i) input[i] = static_cast<double>(i % 977) * 0.25;
  const std::vector<double> serial = transform_with(1, input);
  EXPECT_EQ(serial[5], 5 * 0.25 * 5 * 0.25 - 3.0 * 5 * 0.25 + 1.0);
  EXPECT_EQ(transform_with(2, input), serial);
  EXPECT_EQ(transform_with(7, input), serial);
}

TEST_F(ThreadPoolTest, ExceptionOfAChunkIsRethrownOnTheCaller) {
  set_thread_count(4);
  for (int repeat = 0; repeat < 20; ++repeat) {
    std::atomic<int> running{0};
    int running_when_caught = -1;
    try {
      parallel_for(1000, 1, [&](int64_t begin, int64_t end) {
        running.fetch_add(1);
        if (begin <= 500 && 500 < end) {
          running.fetch_sub(1);
          throw std::runtime_error("chunk with 500");
        }
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        running.fetch_sub(1);
      });
      FAIL() << "no exception";
    } catch (const std::runtime_error& error) {
      EXPECT_STREQ(error.what(), "chunk with 500");
      running_when_caught = running.load();
    }
    // Every chunk had finished before the exception reached the caller.
    EXPECT_EQ(running_when_caught, 0);
  }
  // The pool still works afterwards.
  const std::vector<int> counts = visits(10000, 1);
  EXPECT_EQ(std::accumulate(counts.begin(), counts.end(), 0), 10000);
}

TEST_F(ThreadPoolTest, ExceptionOnTheInlinePathIsRethrown) {
  set_thread_count(1);
  EXPECT_THROW(parallel_for(10, 1, [](int64_t, int64_t) { throw std::logic_error("inline"); }),
               std::logic_error);
}

TEST_F(ThreadPoolTest, NestedCallRunsInlineWithoutDeadlock) {
  set_thread_count(4);
  constexpr int64_t kOuter = 64;
  constexpr int64_t kInner = 1000;
  std::vector<std::atomic<int>> counts(kOuter * kInner);
  parallel_for(kOuter, 1, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      std::thread::id outer_thread = std::this_thread::get_id();
      int inner_calls = 0;
      parallel_for(kInner, 1, [&](int64_t inner_begin, int64_t inner_end) {
        ++inner_calls;
        EXPECT_EQ(std::this_thread::get_id(), outer_thread);
        for (int64_t i = inner_begin; i < inner_end; ++i) counts[row * kInner + i].fetch_add(1);
      });
      EXPECT_EQ(inner_calls, 1);
    }
  });
  for (size_t i = 0; i < counts.size(); ++i) ASSERT_EQ(counts[i].load(), 1) << "index " << i;
}

TEST_F(ThreadPoolTest, ConcurrentCallersEachGetTheirWholeRange) {
  set_thread_count(3);
  constexpr int kCallers = 4;
  constexpr int kCallsEach = 200;
  std::vector<int64_t> sums(kCallers, 0);
  std::vector<std::thread> callers;
  for (int caller = 0; caller < kCallers; ++caller) {
    callers.emplace_back([&sums, caller] {
      for (int call = 0; call < kCallsEach; ++call) {
        const int64_t count = 1000 + 37 * call + caller;
        std::atomic<int64_t> sum{0};
        parallel_for(count, 16, [&](int64_t begin, int64_t end) {
          int64_t local = 0;
          for (int64_t i = begin; i < end; ++i) local += i;
          sum.fetch_add(local);
        });
        if (sum.load() == count * (count - 1) / 2) ++sums[caller];
      }
    });
  }
  for (std::thread& caller : callers) caller.join();
  for (int caller = 0; caller < kCallers; ++caller) {
    EXPECT_EQ(sums[caller], kCallsEach) << "caller " << caller;
  }
}

TEST_F(ThreadPoolTest, ChangingTheThreadCountBetweenCallsTakesEffect) {
  for (int threads : {4, 2, 5, 1, 3}) {
    set_thread_count(threads);
    EXPECT_EQ(thread_count(), threads);
    EXPECT_EQ(chunks_of(100000, 1).size(), static_cast<size_t>(threads));
  }
}

TEST_F(ThreadPoolTest, NonPositiveCountRestoresTheDefault) {
  set_thread_count(0);
  const int default_count = thread_count();
  EXPECT_GE(default_count, 1);
  set_thread_count(7);
  EXPECT_EQ(thread_count(), 7);
  set_thread_count(-3);
  EXPECT_EQ(thread_count(), default_count);
}

TEST_F(ThreadPoolTest, EnvironmentSetsTheDefaultAndInvalidValuesAreIgnored) {
  const int hardware = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  const std::vector<std::pair<const char*, int>> cases = {
      {"3", 3},           {"1", 1},         {"0", hardware}, {"-2", hardware},
      {"four", hardware}, {"5x", hardware}, {"", hardware},  {"99999999999999", hardware}};
  for (const auto& [text, expected] : cases) {
    setenv("LZ_NUM_THREADS", text, 1);
    set_thread_count(0);
    EXPECT_EQ(thread_count(), expected) << "LZ_NUM_THREADS=" << text;
  }
  unsetenv("LZ_NUM_THREADS");
}

}  // namespace
}  // namespace lz::runtime
