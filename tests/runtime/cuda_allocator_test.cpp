// The CUDA caching allocator's policy, on a fake device whose memory is a counter: reuse within a
// stream and size class, no reuse across streams, none while other streams read a block, cached
// memory given back before the device or the limit refuses, errors that name the op and the
// numbers.
#include <gtest/gtest.h>

#include <lazuli/error.h>

#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "runtime/cuda/caching_allocator.h"

namespace {

using lz::runtime::cuda::AllocatorBackend;
using lz::runtime::cuda::CachingAllocator;

constexpr int64_t kMiB = int64_t{1} << 20;

/// A device of `capacity` bytes handing out increasing fake addresses.
class FakeDevice {
 public:
  explicit FakeDevice(int64_t capacity) : capacity_(capacity) {}

  AllocatorBackend backend() {
    return {[this](int64_t bytes) -> uint64_t {
              std::lock_guard lock(mutex_);
              if (live_bytes_ + bytes > capacity_) return 0;
              idle_ = false;
              live_bytes_ += bytes;
              const uint64_t address = next_;
              next_ += static_cast<uint64_t>(bytes);
              live_[address] = bytes;
              return address;
            },
            [this](uint64_t address, int64_t bytes) {
              std::lock_guard lock(mutex_);
              EXPECT_EQ(live_.at(address), bytes) << "released with another size";
              EXPECT_TRUE(idle_) << "a cached block went back before the device was idle";
              live_.erase(address);
              live_bytes_ -= bytes;
            },
            [this] {
              std::lock_guard lock(mutex_);
              idle_ = true;
            }};
  }
  int64_t live_bytes() {
    std::lock_guard lock(mutex_);
    return live_bytes_;
  }

 private:
  std::mutex mutex_;
  const int64_t capacity_;
  int64_t live_bytes_ = 0;
  bool idle_ = false;  // quiesced, and nothing allocated (so nothing queued) since
  uint64_t next_ = 0x10000;
  std::map<uint64_t, int64_t> live_;
};

auto no_limit() {
  return [] { return int64_t{1} << 50; };
}

TEST(CudaAllocatorTest, SizeClassesRoundTo512BytesThenTo2MiB) {
  EXPECT_EQ(CachingAllocator::size_class(0), 512);
  EXPECT_EQ(CachingAllocator::size_class(1), 512);
  EXPECT_EQ(CachingAllocator::size_class(512), 512);
  EXPECT_EQ(CachingAllocator::size_class(513), 1024);
  EXPECT_EQ(CachingAllocator::size_class(kMiB), kMiB);
  EXPECT_EQ(CachingAllocator::size_class(kMiB + 1), 2 * kMiB);
  EXPECT_EQ(CachingAllocator::size_class(3 * kMiB), 4 * kMiB);
}

TEST(CudaAllocatorTest, AFreedBlockServesTheNextRequestOfItsClassOnItsStream) {
  FakeDevice device(64 * kMiB);
  CachingAllocator allocator(device.backend(), no_limit());
  const uint64_t first = allocator.allocate(1000, 0, "add");
  allocator.free(first, 1000, 0);
  EXPECT_EQ(allocator.allocate(900, 0, "add"), first) << "900 and 1000 bytes share a class";
  const auto statistics = allocator.statistics();
  EXPECT_EQ(statistics.allocations, 2);
  EXPECT_EQ(statistics.reuses, 1);
  EXPECT_EQ(statistics.device_allocations, 1);
  EXPECT_EQ(statistics.bytes_in_use, 1024);
  EXPECT_EQ(statistics.bytes_cached, 0);
}

TEST(CudaAllocatorTest, AnotherStreamNeverTakesABlockStillOrderedOnTheFirst) {
  FakeDevice device(64 * kMiB);
  CachingAllocator allocator(device.backend(), no_limit());
  const uint64_t first = allocator.allocate(4096, 0, "add");
  allocator.free(first, 4096, 0);
  EXPECT_NE(allocator.allocate(4096, 1, "add"), first);
  EXPECT_EQ(allocator.statistics().device_allocations, 2);
  EXPECT_EQ(allocator.statistics().bytes_cached, 4096);
}

TEST(CudaAllocatorTest, ABlockReadOnOtherStreamsIsReusedOnlyOnceTheReadsHaveRun) {
  FakeDevice device(64 * kMiB);
  CachingAllocator allocator(device.backend(), no_limit());
  const uint64_t first = allocator.allocate(4096, 0, "add");
  bool reads_done = false;
  allocator.free(first, 4096, 0, [&reads_done] { return reads_done; });
  EXPECT_EQ(allocator.statistics().bytes_cached, 4096) << "a held-back block counts as cached";
  const uint64_t while_read = allocator.allocate(4096, 0, "add");
  EXPECT_NE(while_read, first) << "reused while another stream still reads it";
  reads_done = true;
  EXPECT_EQ(allocator.allocate(4096, 0, "add"), first);
  const auto statistics = allocator.statistics();
  EXPECT_EQ(statistics.reuses, 1);
  EXPECT_EQ(statistics.device_allocations, 2);
  EXPECT_EQ(statistics.bytes_cached, 0);
}

TEST(CudaAllocatorTest, OnlyAnAllocationThatCouldTakeAHeldBackBlockAsksWhetherItsReadsHaveRun) {
  FakeDevice device(64 * kMiB);
  CachingAllocator allocator(device.backend(), no_limit());
  int questions = 0;  // each a cuEventQuery per reader stream on a GPU
  allocator.free(allocator.allocate(4096, 0, "add"), 4096, 0, [&questions] {
    ++questions;
    return true;
  });
  allocator.allocate(8192, 0, "add");  // another size class
  allocator.allocate(4096, 1, "add");  // another stream
  EXPECT_EQ(questions, 0);
  allocator.allocate(4096, 0, "add");
  EXPECT_EQ(questions, 1);
  EXPECT_EQ(allocator.statistics().reuses, 1);
}

TEST(CudaAllocatorTest, WhenTheDeviceIsFullHeldBackBlocksGoBackAfterTheDeviceIsIdle) {
  FakeDevice device(4 * kMiB);
  CachingAllocator allocator(device.backend(), no_limit());
  allocator.free(allocator.allocate(2 * kMiB, 0, "add"), 2 * kMiB, 0, [] { return false; });
  // The fake device checks that the block goes back only after quiesce.
  EXPECT_NE(allocator.allocate(4 * kMiB, 0, "mul"), 0u);
  EXPECT_EQ(device.live_bytes(), 4 * kMiB) << "the held-back 2 MiB went back to the device";
  EXPECT_EQ(allocator.statistics().bytes_cached, 0);
}

TEST(CudaAllocatorTest, WhenTheDeviceIsFullCachedBlocksGoBackFirst) {
  FakeDevice device(4 * kMiB);
  CachingAllocator allocator(device.backend(), no_limit());
  allocator.free(allocator.allocate(2 * kMiB, 0, "add"), 2 * kMiB, 0);
  const uint64_t big = allocator.allocate(4 * kMiB, 1, "mul");
  EXPECT_NE(big, 0u);
  EXPECT_EQ(device.live_bytes(), 4 * kMiB) << "the cached 2 MiB went back to the device";
  const auto statistics = allocator.statistics();
  EXPECT_EQ(statistics.cache_flushes, 1);
  EXPECT_EQ(statistics.bytes_cached, 0);
  EXPECT_EQ(statistics.bytes_in_use, 4 * kMiB);
}

TEST(CudaAllocatorTest, TheMemoryLimitCountsCachedBlocksAndAppliesAtOnce) {
  FakeDevice device(64 * kMiB);
  int64_t limit = 3 * kMiB;
  CachingAllocator allocator(device.backend(), [&] { return limit; });
  allocator.free(allocator.allocate(2 * kMiB, 0, "add"), 2 * kMiB, 0);
  (void)allocator.allocate(2 * kMiB, 1, "add");
  EXPECT_EQ(device.live_bytes(), 2 * kMiB) << "2 in use + 2 cached would exceed 3";
  limit = 8 * kMiB;
  (void)allocator.allocate(4 * kMiB, 1, "add");
  EXPECT_EQ(allocator.statistics().bytes_in_use, 6 * kMiB);
}

TEST(CudaAllocatorTest, BeyondTheLimitTheErrorNamesTheOpAndTheNumbers) {
  FakeDevice device(64 * kMiB);
  CachingAllocator allocator(device.backend(), [] { return 3 * kMiB; });
  (void)allocator.allocate(2 * kMiB, 0, "add");
  try {
    (void)allocator.allocate(2 * kMiB, 0, "matmul");
    FAIL() << "expected lz::Error";
  } catch (const lz::Error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("[matmul] cannot allocate 2097152 bytes on the GPU: 2 MiB in use, and "
                           "the memory limit is 3 MiB"),
              std::string::npos)
        << message;
  }
  EXPECT_EQ(allocator.statistics().bytes_in_use, 2 * kMiB) << "a refusal changes nothing";
}

TEST(CudaAllocatorTest, AFullDeviceIsReportedWithWhatLazuliHolds) {
  FakeDevice device(2 * kMiB);
  CachingAllocator allocator(device.backend(), no_limit());
  (void)allocator.allocate(2 * kMiB, 0, "add");
  try {
    (void)allocator.allocate(kMiB, 0, "exp");
    FAIL() << "expected lz::Error";
  } catch (const lz::Error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("[exp] the GPU is out of memory allocating 1048576 bytes; lazuli holds "
                           "2 MiB in use"),
              std::string::npos)
        << message;
  }
}

TEST(CudaAllocatorTest, ThreadsAllocatingAtOnceKeepTheAccountsExact) {
  FakeDevice device(1024 * kMiB);
  {
    CachingAllocator allocator(device.backend(), no_limit());
    std::vector<std::thread> threads;
    for (int stream = 0; stream < 4; ++stream) {
      threads.emplace_back([&allocator, stream] {
        for (int i = 0; i < 2000; ++i) {
          const int64_t bytes = 512 * (1 + (i * 7 + stream) % 64);
          allocator.free(allocator.allocate(bytes, stream, "add"), bytes, stream);
        }
      });
    }
    for (std::thread& thread : threads) thread.join();
    const auto statistics = allocator.statistics();
    EXPECT_EQ(statistics.bytes_in_use, 0);
    EXPECT_EQ(statistics.allocations, 8000);
    EXPECT_EQ(statistics.reuses + statistics.device_allocations, 8000);
    EXPECT_LE(statistics.device_allocations, 4 * 64) << "one block per stream and class at most";
  }
  EXPECT_EQ(device.live_bytes(), 0) << "destroying the allocator returns every cached block";
}

}  // namespace
