#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "lazuli/stats.h"
#include "memory/buffer.h"

namespace lz::memory {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

// Under AddressSanitizer, blocks under 1 MiB go back to the system at once (memory/buffer.cpp),
// so that a use after free is reported with the stack that freed.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kCachesSmallBlocks = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kCachesSmallBlocks = false;
#else
constexpr bool kCachesSmallBlocks = true;
#endif
#else
constexpr bool kCachesSmallBlocks = true;
#endif

#define SKIP_WITHOUT_SMALL_BLOCK_CACHE()                                                    \
  if (!kCachesSmallBlocks) {                                                                \
    GTEST_SKIP() << "AddressSanitizer builds free blocks under 1 MiB at once, to report a " \
                    "use after free with the stack that freed";                             \
  }

/// A float32 buffer of `bytes` bytes.
std::shared_ptr<memory::Buffer> floats_of_bytes(int64_t bytes) {
  return memory::Buffer::allocate(DType::Float32, bytes / 4);
}

uintptr_t address(const std::shared_ptr<memory::Buffer>& buffer) {
  return reinterpret_cast<uintptr_t>(buffer->data());
}

/// Each test starts with an empty cache and a known limit, and leaves the default behind.
class BufferCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    memory::Buffer::set_cache_limit_bytes(256 * kMiB);
    memory::Buffer::release_cached_memory();
  }
  void TearDown() override {
    memory::Buffer::set_cache_limit_bytes(-1);
    memory::Buffer::release_cached_memory();
  }
};

TEST_F(BufferCacheTest, FreedLargeBufferIsReusedForTheSameSize) {
  void* first = floats_of_bytes(64 * kMiB)->data();
  EXPECT_EQ(memory::Buffer::cached_bytes(), 64 * kMiB);
  const auto second = floats_of_bytes(64 * kMiB);
  EXPECT_EQ(second->data(), first);
  EXPECT_EQ(memory::Buffer::cached_bytes(), 0);
}

TEST_F(BufferCacheTest, SizesThatRoundToTheSameTwoMebibytesShareABlock) {
  // 3 MiB and 4 MiB - 4 bytes both occupy a 4 MiB block; int64 and float32 alike.
  void* first = memory::Buffer::allocate(DType::Int64, 3 * kMiB / 8)->data();
  EXPECT_EQ(memory::Buffer::cached_bytes(), 4 * kMiB);
  const auto second = floats_of_bytes(4 * kMiB - 4);
  EXPECT_EQ(second->data(), first);
  EXPECT_EQ(second->bytes(), 4 * kMiB - 4);
}

TEST_F(BufferCacheTest, DifferentRoundedSizesDoNotShareABlock) {
  void* four = floats_of_bytes(4 * kMiB)->data();
  const auto six = floats_of_bytes(6 * kMiB);
  const auto two = floats_of_bytes(2 * kMiB);
  EXPECT_NE(six->data(), four);
  EXPECT_NE(two->data(), four);
  EXPECT_EQ(memory::Buffer::cached_bytes(), 4 * kMiB);  // still waiting for a 4 MiB allocation
  EXPECT_EQ(floats_of_bytes(4 * kMiB)->data(), four);
}

TEST_F(BufferCacheTest, LiveBuffersNeverShareMemory) {
  std::vector<std::shared_ptr<memory::Buffer>> live;
  for (int round = 0; round < 3; ++round) {
    for (int64_t mib : {1, 2, 3, 4, 2, 1}) live.push_back(floats_of_bytes(mib * kMiB));
    live.erase(live.begin(), live.begin() + 3);  // frees some into the cache
  }
  // Overlap check on the live ones: sorted by address, each ends before the next begins.
  std::vector<std::pair<uintptr_t, uintptr_t>> ranges;
  for (const auto& buffer : live) {
    ranges.emplace_back(address(buffer), address(buffer) + static_cast<uintptr_t>(buffer->bytes()));
  }
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i) EXPECT_LE(ranges[i - 1].second, ranges[i].first);
}

TEST_F(BufferCacheTest, SmallBuffersAre64ByteAligned) {
  std::vector<std::shared_ptr<memory::Buffer>> live;  // none reuses another's block
  for (int64_t size : {0, 1, 3, 17, 1000, 100000, 262143}) {
    const auto& buffer = live.emplace_back(memory::Buffer::allocate(DType::Float32, size));
    EXPECT_EQ(address(buffer) % 64, 0u) << size << " elements";
    std::memset(buffer->data(), 0xab, static_cast<size_t>(buffer->bytes()));
  }
}

TEST_F(BufferCacheTest, FreedSmallBufferIsReusedForTheSameRoundedSize) {
  SKIP_WITHOUT_SMALL_BLOCK_CACHE();
  constexpr int64_t kKiB = 1024;
  void* first = floats_of_bytes(32 * kKiB)->data();
  EXPECT_EQ(memory::Buffer::cached_bytes(), 32 * kKiB);
  const auto larger = floats_of_bytes(32 * kKiB + 64);  // another multiple of 64 bytes
  EXPECT_NE(larger->data(), first);
  const auto second = floats_of_bytes(32 * kKiB - 4);  // the same, rounded up to 64 bytes
  EXPECT_EQ(second->data(), first);
  EXPECT_EQ(memory::Buffer::cached_bytes(), 0);
}

TEST_F(BufferCacheTest, ABufferJustUnderOneMebibyteIsSmallAndNeverServesALargeOne) {
  SKIP_WITHOUT_SMALL_BLOCK_CACHE();
  void* small = floats_of_bytes(kMiB - 32)->data();  // a block of exactly 1 MiB, 64-aligned
  const auto large = floats_of_bytes(kMiB);          // a 2 MiB block, 2 MiB aligned
  EXPECT_NE(large->data(), small);
  EXPECT_EQ(address(large) % (2 * kMiB), 0u);
  EXPECT_EQ(floats_of_bytes(kMiB - 4)->data(), small);
}

TEST_F(BufferCacheTest, SmallBlocksTakeAtMost64MebibytesAndFollowTheLimit) {
  SKIP_WITHOUT_SMALL_BLOCK_CACHE();
  constexpr int64_t kBlock = kMiB - 64;  // the largest small block
  std::vector<std::shared_ptr<memory::Buffer>> buffers;
  for (int i = 0; i < 80; ++i) buffers.push_back(floats_of_bytes(kBlock));
  buffers.clear();
  EXPECT_EQ(memory::Buffer::cached_bytes(), 64 * kBlock) << "as many as fit in 64 MiB";
  memory::Buffer::set_cache_limit_bytes(10 * kMiB);
  EXPECT_LE(memory::Buffer::cached_bytes(), 10 * kMiB);
  memory::Buffer::release_cached_memory();
  EXPECT_EQ(memory::Buffer::cached_bytes(), 0);
  memory::Buffer::set_cache_limit_bytes(0);
  floats_of_bytes(4096).reset();
  EXPECT_EQ(memory::Buffer::cached_bytes(), 0);
}

TEST_F(BufferCacheTest, LargeBuffersAreTwoMebibyteAligned) {
  for (int64_t bytes : {kMiB, kMiB + 4, 2 * kMiB, 5 * kMiB + 12}) {
    const auto buffer = floats_of_bytes(bytes);
    EXPECT_EQ(address(buffer) % (2 * kMiB), 0u) << bytes << " bytes";
    std::memset(buffer->data(), 0xcd, static_cast<size_t>(buffer->bytes()));
  }
}

TEST_F(BufferCacheTest, ReusedBlockHoldsTheNewBuffersData) {
  auto first = floats_of_bytes(2 * kMiB);
  std::memset(first->data(), 0x11, static_cast<size_t>(first->bytes()));
  first.reset();
  const auto second = memory::Buffer::allocate(DType::Int32, 2 * kMiB / 4);
  int32_t* values = second->data_as<int32_t>();
  for (int64_t i = 0; i < second->size(); ++i) values[i] = static_cast<int32_t>(i);
  EXPECT_EQ(values[second->size() - 1], second->size() - 1);
  EXPECT_EQ(values[12345], 12345);
}

TEST_F(BufferCacheTest, CacheStaysWithinItsLimitAndDropsTheOldestFirst) {
  memory::Buffer::set_cache_limit_bytes(10 * kMiB);
  std::vector<std::shared_ptr<memory::Buffer>> buffers;
  for (int i = 0; i < 4; ++i) buffers.push_back(floats_of_bytes(4 * kMiB));
  void* oldest = buffers[0]->data();
  void* newest = buffers[3]->data();
  for (auto& buffer : buffers) {
    buffer.reset();
    EXPECT_LE(memory::Buffer::cached_bytes(), 10 * kMiB);
  }
  EXPECT_EQ(memory::Buffer::cached_bytes(), 8 * kMiB);  // two 4 MiB blocks fit under 10 MiB
  const auto reused = floats_of_bytes(4 * kMiB);
  EXPECT_EQ(reused->data(), newest);  // the most recently freed block comes back first
  EXPECT_NE(reused->data(), oldest);
  // A block larger than the whole limit is never kept.
  floats_of_bytes(12 * kMiB).reset();
  EXPECT_EQ(memory::Buffer::cached_bytes(), 4 * kMiB);
}

TEST_F(BufferCacheTest, LoweringTheLimitFreesBlocksAndZeroTurnsTheCacheOff) {
  floats_of_bytes(4 * kMiB).reset();
  floats_of_bytes(8 * kMiB).reset();
  EXPECT_EQ(memory::Buffer::cached_bytes(), 12 * kMiB);
  memory::Buffer::set_cache_limit_bytes(9 * kMiB);
  EXPECT_EQ(memory::Buffer::cache_limit_bytes(), 9 * kMiB);
  EXPECT_EQ(memory::Buffer::cached_bytes(), 8 * kMiB);  // the older 4 MiB block went first
  memory::Buffer::set_cache_limit_bytes(0);
  EXPECT_EQ(memory::Buffer::cached_bytes(), 0);
  floats_of_bytes(4 * kMiB).reset();
  EXPECT_EQ(memory::Buffer::cached_bytes(), 0);
}

TEST_F(BufferCacheTest, ReleaseCachedMemoryEmptiesTheCache) {
  floats_of_bytes(2 * kMiB).reset();
  floats_of_bytes(6 * kMiB).reset();
  EXPECT_EQ(memory::Buffer::cached_bytes(), 8 * kMiB);
  memory::Buffer::release_cached_memory();
  EXPECT_EQ(memory::Buffer::cached_bytes(), 0);
}

TEST_F(BufferCacheTest, DefaultLimitIsAtMostOneGibibyte) {
  memory::Buffer::set_cache_limit_bytes(-1);
  EXPECT_GT(memory::Buffer::cache_limit_bytes(), 0);
  EXPECT_LE(memory::Buffer::cache_limit_bytes(), int64_t{1} << 30);
}

TEST_F(BufferCacheTest, EnvironmentSetsTheDefaultLimit) {
  setenv("LZ_BUFFER_CACHE_BYTES", "6291456", 1);
  memory::Buffer::set_cache_limit_bytes(-1);
  EXPECT_EQ(memory::Buffer::cache_limit_bytes(), 6 * kMiB);
  setenv("LZ_BUFFER_CACHE_BYTES", "0", 1);
  memory::Buffer::set_cache_limit_bytes(-1);
  EXPECT_EQ(memory::Buffer::cache_limit_bytes(), 0);
  setenv("LZ_BUFFER_CACHE_BYTES", "much", 1);
  memory::Buffer::set_cache_limit_bytes(-1);
  EXPECT_GT(memory::Buffer::cache_limit_bytes(), 0);
  unsetenv("LZ_BUFFER_CACHE_BYTES");
}

TEST_F(BufferCacheTest, EveryAllocationCountsItsBytes) {
  reset_stats();
  floats_of_bytes(4 * kMiB).reset();
  floats_of_bytes(4 * kMiB).reset();  // reused, still counted
  memory::Buffer::allocate(DType::Float64, 10).reset();
  EXPECT_EQ(stats().bytes_allocated, 8 * kMiB + 80);
}

TEST_F(BufferCacheTest, ConcurrentAllocationAndDestructionKeepBuffersPrivate) {
  constexpr int kThreads = 4;
  constexpr int kRounds = 200;
  std::atomic<int> corrupted{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &corrupted] {
      for (int round = 0; round < kRounds; ++round) {
        const int64_t bytes = (1 + (round + t) % 3) * kMiB;
        const auto buffer = memory::Buffer::allocate(DType::Int32, bytes / 4);
        int32_t* values = buffer->data_as<int32_t>();
        const int32_t tag = t * 100000 + round;
        for (int64_t i = 0; i < buffer->size(); i += 512) values[i] = tag;
        std::this_thread::yield();
        for (int64_t i = 0; i < buffer->size(); i += 512) {
          if (values[i] != tag) {
            corrupted.fetch_add(1);
            break;
          }
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(corrupted.load(), 0);
  EXPECT_LE(memory::Buffer::cached_bytes(), 256 * kMiB);
  EXPECT_GT(memory::Buffer::cached_bytes(), 0);
}

}  // namespace
}  // namespace lz::memory
