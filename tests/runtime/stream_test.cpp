// Streams, events and promised buffers: the pieces the asynchronous runtime is built from.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>
#include <vector>

#include "memory/buffer.h"
#include "memory/event.h"
#include "runtime/stream.h"

namespace lz::runtime {
namespace {

TEST(EventTest, WaitersAndCallbacksSeeWhatWasWrittenBeforeSet) {
  memory::Event event;
  int value = 0;
  std::atomic<int> callbacks{0};
  event.on_set([&] { callbacks += value; });
  std::thread writer([&] {
    value = 42;
    event.set();
  });
  event.wait();
  EXPECT_EQ(value, 42);
  writer.join();
  EXPECT_EQ(callbacks.load(), 42) << "the callback ran once, after the write";
  bool ran_now = false;
  event.on_set([&] { ran_now = true; });
  EXPECT_TRUE(ran_now) << "a set event runs a new callback at once";
}

TEST(EventTest, ACallbackThatThrowsIsDroppedAndTheOthersRun) {
  memory::Event event;
  int ran = 0;
  event.on_set([] { throw std::runtime_error("callback failure"); });
  event.on_set([&] { ++ran; });
  event.set();
  EXPECT_TRUE(event.is_set());
  EXPECT_EQ(ran, 1);
}

TEST(StreamTest, TasksRunInSubmissionOrderOnOneThread) {
  Stream stream("test stream");
  std::vector<int> order;
  std::vector<std::thread::id> threads;
  for (int i = 0; i < 100; ++i) {
    stream.submit([&, i] {
      order.push_back(i);
      threads.push_back(std::this_thread::get_id());
    });
  }
  stream.synchronize();
  ASSERT_EQ(order.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(order[i], i);
  for (const std::thread::id& id : threads) EXPECT_EQ(id, threads.front());
  EXPECT_NE(threads.front(), std::this_thread::get_id());
  EXPECT_EQ(stream.pending(), 0);
}

// The first stream's task waits for the second stream's task, which can run only beside it. The
// wait is bounded only so that streams run one after the other fail here instead of hanging: a
// deadlock is what the bound tests, not a speed (a correct stream runs the task at once).
TEST(StreamTest, TwoStreamsRunConcurrently) {
  Stream first("first");
  Stream second("second");
  std::promise<std::thread::id> second_ran;
  const std::shared_future<std::thread::id> ran = second_ran.get_future().share();
  std::atomic<bool> saw_second{false};
  std::thread::id first_thread;
  first.submit([&] {
    first_thread = std::this_thread::get_id();
    saw_second = ran.wait_for(std::chrono::seconds(60)) == std::future_status::ready;
  });
  second.submit([&] { second_ran.set_value(std::this_thread::get_id()); });
  first.synchronize();
  second.synchronize();
  EXPECT_TRUE(saw_second) << "the second stream's task did not run while the first's waited";
  ASSERT_TRUE(ran.valid());
  const std::thread::id second_thread = ran.get();
  EXPECT_NE(first_thread, second_thread) << "both tasks ran on one thread";
  EXPECT_NE(first_thread, std::this_thread::get_id());
  EXPECT_NE(second_thread, std::this_thread::get_id());
  EXPECT_EQ(first.pending(), 0);
  EXPECT_EQ(second.pending(), 0);
}

TEST(StreamTest, AClaimRunsOnTheCallerAndQueuesLaterWorkBehindIt) {
  Stream stream("claimed");
  ASSERT_TRUE(stream.claim_if_idle());
  EXPECT_FALSE(stream.claim_if_idle()) << "already claimed";
  std::vector<int> order;
  stream.submit([&] { order.push_back(2); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_TRUE(order.empty()) << "queued behind the claim";
  EXPECT_EQ(stream.pending(), 2);
  order.push_back(1);  // the caller's own task
  stream.release();
  stream.synchronize();
  EXPECT_EQ(order, std::vector<int>({1, 2}));
}

TEST(StreamTest, DestroyingAStreamRunsWhatIsQueued) {
  std::atomic<int> ran{0};
  {
    Stream stream("short-lived");
    for (int i = 0; i < 10; ++i) stream.submit([&] { ++ran; });
  }
  EXPECT_EQ(ran.load(), 10);
}

TEST(PromisedBufferTest, IsReadyOnlyOnceFulfilledAndShowsTheComputedMemory) {
  auto written = std::make_shared<memory::Event>();
  std::shared_ptr<memory::Buffer> promise = memory::Buffer::promise(float32, 4, written);
  EXPECT_FALSE(promise->is_ready());
  std::shared_ptr<memory::Buffer> computed = memory::Buffer::allocate(float32, 4);
  for (int i = 0; i < 4; ++i) computed->data_as<float>()[i] = static_cast<float>(i) * 1.5f;
  const void* memory = computed->data();
  std::thread stream([&, computed]() mutable {
    promise->fulfil(std::move(computed));
    written->set();
  });
  promise->wait();
  stream.join();
  EXPECT_TRUE(promise->is_ready());
  EXPECT_EQ(promise->error(), nullptr);
  EXPECT_EQ(promise->data(), memory) << "no copy";
  EXPECT_EQ(promise->data_as<float>()[3], 4.5f);
  EXPECT_EQ(promise->bytes(), 16);
}

TEST(PromisedBufferTest, AFailedPromiseCarriesItsError) {
  auto written = std::make_shared<memory::Event>();
  std::shared_ptr<memory::Buffer> promise = memory::Buffer::promise(int64, 2, written);
  promise->fail(std::make_exception_ptr(std::runtime_error("kernel failed")));
  written->set();
  ASSERT_TRUE(promise->is_ready());
  ASSERT_NE(promise->error(), nullptr);
  EXPECT_THROW(std::rethrow_exception(promise->error()), std::runtime_error);
}

TEST(MemoryLimitTest, AllocationsBeyondTheLimitFailAndFreedBytesCountAgain) {
  memory::Buffer::set_memory_limit(memory::Buffer::live_bytes() + (8 << 20));
  std::shared_ptr<memory::Buffer> first = memory::Buffer::allocate(float32, 1 << 20);  // 4 MiB
  EXPECT_THROW(memory::Buffer::allocate(float32, 2 << 20), std::bad_alloc) << "4 + 8 MiB > 8 MiB";
  first.reset();
  EXPECT_NO_THROW(memory::Buffer::allocate(float32, 2 << 20)) << "the 4 MiB were given back";
  memory::Buffer::set_memory_limit(0);
  EXPECT_GT(memory::Buffer::memory_limit(), int64_t{1} << 20) << "the default is restored";
}

}  // namespace
}  // namespace lz::runtime
