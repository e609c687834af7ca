// The asynchronous runtime seen from the user's side: blocking points wait only for what they
// need, logical devices run concurrently, failures of background work surface at the blocking
// point that depends on them, bounds keep a loop without blocking points in bounded memory.
#include <gtest/gtest.h>

#include <lazuli/lazuli.h>

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <future>
#include <iterator>
#include <stdexcept>
#include <string>
#include <thread>

#include "ir/pending_list.h"
#include "memory/buffer.h"
#include "runtime/devices.h"

namespace {

/// Holds a device's stream busy until release(): work launched on that device queues behind it,
/// which makes "still running" deterministic instead of a matter of timing.
class StreamGate {
 public:
  explicit StreamGate(int device) {
    lz::runtime::cpu_stream(device).submit(
        [opened = opened_.get_future().share()] { opened.wait(); });
  }
  ~StreamGate() { release(); }
  void release() {
    if (!released_) opened_.set_value();
    released_ = true;
  }

 private:
  std::promise<void> opened_;
  bool released_ = false;
};

/// The line of the statement before this call, as source_location reports it.
int line_here(std::source_location loc = std::source_location::current()) {
  return static_cast<int>(loc.line());
}

class AsyncTest : public ::testing::Test {
 protected:
  void SetUp() override { lz::waitall(); }
  void TearDown() override {
    lz::set_memory_limit(0);
    lz::set_engine(lz::Engine::Async);
    lz::set_max_pending_nodes(10000);
    lz::set_max_in_flight(32);
    lz::waitall();
  }
};

TEST_F(AsyncTest, EvalAsyncReturnsBeforeTheWorkIsDone) {
  StreamGate gate(0);
  const lz::Tensor y = lz::arange(0, 4) * 2;
  y.eval_async();
  EXPECT_FALSE(y.is_ready()) << "cpu:0's stream is held, so the launch cannot have run";
  EXPECT_TRUE(y.node()->is_evaluated()) << "launched: a data leaf holding a promised buffer";
  gate.release();
  EXPECT_EQ(y.to_vector<float>(), std::vector<float>({0, 2, 4, 6}));
  EXPECT_TRUE(y.is_ready());
}

TEST_F(AsyncTest, WaitToReadOnOneDeviceDoesNotWaitForAnother) {
  StreamGate gate(1);
  lz::Tensor slow;
  {
    lz::DeviceScope scope(lz::Device::cpu(1));
    slow = lz::ones({1000}) * 3;
  }
  slow.eval_async();
  const lz::Tensor fast = lz::arange(0, 3) + 1;  // on cpu:0
  EXPECT_EQ(fast.device(), lz::Device::cpu(0));
  EXPECT_EQ(slow.device(), lz::Device::cpu(1));
  EXPECT_EQ(fast.to_vector<float>(), std::vector<float>({1, 2, 3}));
  EXPECT_FALSE(slow.is_ready()) << "cpu:1 is still held: fast did not wait for it";
  gate.release();
  EXPECT_EQ(lz::sum(slow).item<float>(), 3000);
}

TEST_F(AsyncTest, WorkOnAnotherDeviceWaitsForTheDataItReads) {
  StreamGate gate(1);
  lz::Tensor produced;
  {
    lz::DeviceScope scope(lz::Device::cpu(1));
    produced = lz::arange(0, 5) * 10;
  }
  const lz::Tensor moved = produced.to(lz::Device::cpu(0));  // launches on cpu:1, held
  EXPECT_EQ(moved.device(), lz::Device::cpu(0));
  const lz::Tensor consumer = moved + 1;
  consumer.eval_async();
  // cpu:0 runs the consumer, which must wait for cpu:1's write.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(consumer.is_ready());
  gate.release();
  EXPECT_EQ(consumer.to_vector<float>(), std::vector<float>({1, 11, 21, 31, 41}));
}

TEST_F(AsyncTest, AnOpOnTensorsOfTwoDevicesNamesBothAndTheFix) {
  const lz::Tensor a = lz::ones({2});
  lz::Tensor b;
  {
    lz::DeviceScope scope(lz::Device::cpu(1));
    b = lz::ones({2});
  }
  try {
    (void)(a + b);
    FAIL() << "expected lz::Error";
  } catch (const lz::Error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("[add]"), std::string::npos) << message;
    EXPECT_NE(message.find("cpu:0 and cpu:1"), std::string::npos) << message;
    EXPECT_NE(message.find(".to("), std::string::npos) << message;
  }
  EXPECT_EQ((a + b.to(lz::Device::cpu(0))).to_vector<float>(), std::vector<float>({2, 2}));
  EXPECT_EQ((a * 5 + 1).device(), lz::Device::cpu(0)) << "scalars follow the tensor";
}

TEST_F(AsyncTest, AFailureIsRaisedWhereItIsNeededAndSparesTheRest) {
  lz::set_memory_limit(64 << 20);
  const lz::Tensor small = lz::arange(0, 4) + 1;
  const int line = line_here() + 1;
  const lz::Tensor huge = lz::ones({32 << 20}) + 1;  // 128 MiB: over the limit
  lz::eval_async({small, huge});                     // one evaluation for both
  EXPECT_EQ(small.to_vector<float>(), std::vector<float>({1, 2, 3, 4}))
      << "the unrelated tensor of the same evaluation is computed";
  try {
    huge.wait_to_read();
    FAIL() << "expected lz::Error";
  } catch (const lz::Error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("out of memory"), std::string::npos) << message;
    EXPECT_NE(message.find("async_test.cpp:" + std::to_string(line)), std::string::npos) << message;
    ASSERT_TRUE(error.location().has_value()) << "the line that recorded the failed op";
    EXPECT_EQ(error.location()->line(), static_cast<unsigned>(line));
    EXPECT_STREQ(error.location()->file_name(), __FILE__);
  }
  EXPECT_TRUE(huge.is_ready()) << "failed is finished";
  EXPECT_THROW(huge.item<float>(), lz::Error) << "every read of it fails the same way";
  EXPECT_NO_THROW(lz::waitall()) << "already raised at wait_to_read";
  lz::set_memory_limit(0);
  EXPECT_EQ(lz::sum(lz::ones({32 << 20})).item<float>(), 32 << 20) << "the runtime keeps working";
}

TEST_F(AsyncTest, ConstantsThatCannotBeFoldedUnderTheMemoryLimitFailAtTheUsersLine) {
  lz::set_memory_limit(1);  // not even the simplifier's one-element buffers fit
  const int line = line_here() + 1;
  const lz::Tensor folded = lz::full({4}, 2.0f) * 3.0f;
  try {
    folded.wait_to_read();
    FAIL() << "expected lz::Error";
  } catch (const lz::Error& error) {
    ASSERT_TRUE(error.location().has_value()) << error.what();
    EXPECT_EQ(error.location()->line(), static_cast<unsigned>(line)) << error.what();
  }
  lz::set_memory_limit(0);
  EXPECT_EQ((lz::full({4}, 2.0f) * 3.0f).to_vector<float>(), std::vector<float>(4, 6.0f))
      << "folding works again once memory is available";
}

TEST_F(AsyncTest, WaitallRaisesAFailureNoBlockingPointRaised) {
  lz::set_memory_limit(16 << 20);
  const lz::Tensor unread = lz::ones({8 << 20}) * 2;  // 32 MiB, held but never read
  unread.eval_async();
  EXPECT_THROW(lz::waitall(), lz::Error);
  EXPECT_NO_THROW(lz::waitall()) << "raised once";
}

TEST_F(AsyncTest, ASuccessorOfAFailedTensorFailsWithTheSameError) {
  lz::set_memory_limit(16 << 20);  // kept until the launch has failed: it runs asynchronously
  const lz::Tensor failed = lz::random_uniform({8 << 20}, /*seed=*/3) * 2;  // 32 MiB
  std::string first, second;
  try {
    failed.wait_to_read();
  } catch (const lz::Error& error) {
    first = error.what();
  }
  lz::set_memory_limit(0);
  const lz::Tensor next = lz::sum(failed);  // would fit now, but reads a failed tensor
  try {
    next.wait_to_read();
  } catch (const lz::Error& error) {
    second = error.what();
  }
  EXPECT_NE(first.find("[mul]"), std::string::npos) << first;
  EXPECT_EQ(first, second) << "the earliest error wins";
  EXPECT_NO_THROW(lz::waitall()) << "both raised already: an inherited failure is not new";
}

TEST_F(AsyncTest, SyncEngineRaisesAtTheLineThatRecordedTheOp) {
  lz::set_engine(lz::Engine::Sync);
  const lz::Tensor x = lz::arange(0, 3);
  EXPECT_TRUE(x.is_ready()) << "computed as it was recorded";
  const lz::Tensor y = x * 2;
  EXPECT_TRUE(y.is_ready());
  EXPECT_EQ(y.to_vector<float>(), std::vector<float>({0, 2, 4}));
  EXPECT_EQ(lz::last_evaluation().reason, lz::EvaluationReason::SyncEngine)
      << "reading a computed tensor launches nothing";
  lz::set_memory_limit(16 << 20);
  int line = 0;
  try {
    line = line_here() + 1;
    const lz::Tensor failing = lz::ones({8 << 20}) * 2;  // 32 MiB: over the limit
    FAIL() << "expected lz::Error at the line that recorded the op";
  } catch (const lz::Error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("async_test.cpp:" + std::to_string(line)), std::string::npos) << message;
  }
}

TEST_F(AsyncTest, ThenRunsOnceTheTensorIsComputed) {
  StreamGate gate(0);
  const lz::Tensor y = lz::arange(0, 3) + 5;
  std::promise<float> first_value;
  std::atomic<int> calls{0};
  y.then([&] {
    ++calls;
    first_value.set_value(y.node()->buffer->data_as<float>()[0]);
  });
  EXPECT_EQ(calls.load(), 0) << "the stream is held";
  gate.release();
  EXPECT_EQ(first_value.get_future().get(), 5.0f);
  EXPECT_EQ(calls.load(), 1);
  bool ran_now = false;
  y.then([&] { ran_now = true; });
  EXPECT_TRUE(ran_now) << "a ready tensor runs the callback at once";
}

TEST_F(AsyncTest, ThenCallbackMayRecordWaitAndCallWaitall) {
  StreamGate gate(0);
  const lz::Tensor y = lz::arange(0, 3) + 5;
  std::promise<float> read_in_callback;
  y.then([&] {
    // Runs on the callback thread, not on cpu:0's stream: launching on that stream and
    // waiting for it from here must not deadlock.
    const lz::Tensor z = y * 10;
    const float first = z.to_vector<float>()[0];
    lz::waitall();
    read_in_callback.set_value(first);
  });
  gate.release();
  std::future<float> result = read_in_callback.get_future();
  ASSERT_EQ(result.wait_for(std::chrono::seconds(60)), std::future_status::ready)
      << "the callback deadlocked";
  EXPECT_EQ(result.get(), 50.0f);
}

TEST_F(AsyncTest, WaitallWaitsForTheCallbacksOfTheWorkItWaitedFor) {
  StreamGate gate(0);
  const lz::Tensor y = lz::ones({4});
  std::atomic<bool> finished{false};
  y.then([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    finished = true;
  });
  gate.release();
  lz::waitall();
  EXPECT_TRUE(finished.load()) << "waitall returned while a callback was still running";
}

TEST_F(AsyncTest, ExceedingTheNodeBudgetLaunchesAsynchronously) {
  lz::set_max_pending_nodes(100);
  StreamGate gate(0);
  lz::Tensor x = lz::zeros({}, lz::int64);
  for (int i = 0; i < 150; ++i) x = x + 1;
  EXPECT_LE(lz::ir::PendingList::global().size(), 100) << "launched at the budget";
  EXPECT_EQ(lz::last_evaluation().reason, lz::EvaluationReason::NodeBudget);
  gate.release();
  EXPECT_EQ(x.item<int64_t>(), 150);
}

TEST_F(AsyncTest, TheTraceShowsLaunchRunFlowAndTheWaitWithItsReason) {
  const std::string path = ::testing::TempDir() + "lazuli_async_trace.json";
  lz::start_trace(path);
  {
    StreamGate gate(1);
    lz::Tensor y;
    {
      lz::DeviceScope scope(lz::Device::cpu(1));
      y = lz::exp(lz::arange(0, 8)) * 2;
    }
    y.eval_async();
    std::thread release([&gate] {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      gate.release();
    });
    y.wait_to_read();  // waits: cpu:1 is held until the thread releases it
    release.join();
  }
  lz::stop_trace();
  std::ifstream file(path);
  const std::string trace((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  for (const char* expected :
       {"\"stream cpu:1/0\"", "\"cat\":\"launch\"", "\"cat\":\"run\"", "\"ph\":\"s\"",
        "\"ph\":\"f\"", "\"cat\":\"pass\"", "\"name\":\"fuse\"", "\"cat\":\"record\"",
        "\"name\":\"wait_to_read\"", "\"cat\":\"kernel\""}) {
    EXPECT_NE(trace.find(expected), std::string::npos) << expected << " missing from " << trace;
  }
  std::remove(path.c_str());
}

/// Peak resident memory of this process so far (VmHWM), in bytes.
int64_t peak_resident_bytes() {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    if (key == "VmHWM:") {
      int64_t kib = 0;
      status >> kib;
      return kib * 1024;
    }
    status.ignore(1 << 20, '\n');
  }
  return 0;
}

TEST_F(AsyncTest, AMillionOpsWithoutABlockingPointRunInBoundedMemory) {
  const int64_t before = peak_resident_bytes();
  lz::Tensor x = lz::zeros({16}, lz::int64);
  int64_t most_pending = 0;
  for (int i = 0; i < 1'000'000; ++i) {
    x = x + 1;
    most_pending = std::max(most_pending, lz::ir::PendingList::global().size());
  }
  const int64_t after = peak_resident_bytes();
  EXPECT_EQ(x.to_vector<int64_t>(), std::vector<int64_t>(16, 1'000'000));
  EXPECT_LE(most_pending, 10000 + 1) << "the node budget bounds the pending graph";
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "peak memory not compared: AddressSanitizer's quarantine keeps freed memory";
#elif defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "peak memory not compared: ThreadSanitizer's shadow memory grows with every "
                  "allocation, several times its size";
#endif
  // A million pending nodes take ~300 MB; the node budget keeps at most 10,000 (a few MB) and
  // the in-flight bound a few launches' graphs.
  EXPECT_LT(after - before, int64_t{100} << 20) << "peak grew from " << before << " to " << after;
}

/// Three reductions of a chain launched on held cpu:0: the kernels that launch planned, and those
/// run and cancelled once the stream was let go.
struct HeldLaunch {
  int64_t planned = 0;
  int64_t launched = 0;
  int64_t cancelled = 0;
  std::vector<float> values;  // when kept
};

HeldLaunch run_held_launch(bool keep) {
  const lz::Stats before = lz::stats();
  HeldLaunch held;
  StreamGate gate(0);
  {
    const lz::Tensor x = lz::exp(lz::arange(0, 1000) * 0.001);
    const lz::Tensor y =
        lz::concatenate({lz::reshape(lz::sum(x), {1}), lz::reshape(lz::max(x * 2), {1}),
                         lz::reshape(lz::min(x - 1), {1})});
    y.eval_async();
    held.planned = lz::last_evaluation().kernels;
    if (keep) {
      gate.release();
      held.values = y.to_vector<float>();
    }
  }  // y and x go: nothing can read the launch's result any more
  gate.release();
  lz::waitall();  // a cancellation is no failure to raise
  const lz::Stats after = lz::stats();
  held.launched = after.kernels_launched - before.kernels_launched;
  held.cancelled = after.kernels_cancelled - before.kernels_cancelled;
  return held;
}

TEST_F(AsyncTest, LaunchedWorkThatNoTensorCanReadIsNotRun) {
  const HeldLaunch dropped = run_held_launch(/*keep=*/false);
  EXPECT_GE(dropped.planned, 1);
  EXPECT_EQ(dropped.launched, 0);
  EXPECT_EQ(dropped.cancelled, dropped.planned);
  // The same launch, read: every kernel runs, and the values are right.
  const HeldLaunch kept = run_held_launch(/*keep=*/true);
  EXPECT_EQ(kept.launched, kept.planned);
  EXPECT_EQ(kept.cancelled, 0);
  double sum = 0;
  for (int i = 0; i < 1000; ++i) sum += std::exp(i * 0.001);
  ASSERT_EQ(kept.values.size(), 3u);
  EXPECT_NEAR(kept.values[0], sum, 1e-5 * sum);
  EXPECT_NEAR(kept.values[1], 2 * std::exp(0.999), 1e-5);
  EXPECT_NEAR(kept.values[2], 0, 1e-6);  // exp(0) - 1
}

TEST_F(AsyncTest, AnInterruptibleWaitLeavesWhenItsCheckThrowsAndTheWorkGoesOn) {
  StreamGate gate(0);
  const lz::Tensor y = lz::arange(0, 4) * 2;
  y.eval_async();
  int checks = 0;
  {
    lz::InterruptibleWaits waits(
        [&] {
          if (++checks >= 3) throw std::runtime_error("interrupted");
        },
        std::chrono::milliseconds(1));
    EXPECT_THROW(y.wait_to_read(), std::runtime_error);
    EXPECT_THROW(lz::waitall(), std::runtime_error) << "waitall's wait is interruptible too";
  }
  EXPECT_EQ(checks, 4) << "called between slices until it threw, each time";
  EXPECT_FALSE(y.is_ready()) << "the stream is still held";
  gate.release();
  EXPECT_EQ(y.to_vector<float>(), std::vector<float>({0, 2, 4, 6}));
}

TEST_F(AsyncTest, BackPressureBoundsTheLaunchesInFlight) {
  lz::set_max_in_flight(2);
  StreamGate gate(1);
  std::atomic<bool> third_launched{false};
  std::thread frontend([&] {
    lz::DeviceScope scope(lz::Device::cpu(1));
    (lz::ones({4}) + 1).eval_async();
    (lz::ones({4}) + 2).eval_async();
    (lz::ones({4}) + 3).eval_async();  // two in flight: waits for the oldest
    third_launched = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(third_launched.load()) << "the third launch waits while cpu:1 is held";
  gate.release();
  frontend.join();
  EXPECT_TRUE(third_launched.load());
}

TEST_F(AsyncTest, ThreadsRecordAndEvaluateAtOnce) {
  constexpr int kThreads = 4;
  std::vector<std::thread> threads;
  std::vector<int64_t> results(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &results] {
      lz::DeviceScope scope(lz::Device::cpu(t % 2));
      lz::Tensor x = lz::full({8}, t, lz::int64);
      for (int i = 0; i < 2000; ++i) {
        x = x + 1;
        if (i % 250 == 0) x.eval_async();
      }
      results[t] = lz::sum(x).item<int64_t>();
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(results[t], 8 * (t + 2000)) << "thread " << t;
}

// A program that exits from a signal handler (a SIGINT handler calling std::exit, say) may be
// interrupted while its own thread runs a launch: a blocking point that found the stream idle
// runs it on the calling thread. Exit waits for queued work, but never for the thread that is
// exiting. Runs in a re-executed process ("threadsafe" style); a hang is ended by SIGALRM.
TEST(ExitDeathTest, ExitFromASignalHandlerWhileTheCallerRunsALaunchDoesNotHang) {
#if defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "std::exit in a signal handler is signal-unsafe, as ThreadSanitizer rightly "
                  "reports; the hang this test is about does not depend on it";
#endif
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        alarm(30);
        struct sigaction exit_on_signal = {};
        exit_on_signal.sa_handler = [](int) { std::exit(3); };
        sigaction(SIGUSR1, &exit_on_signal, nullptr);
        std::thread([caller = pthread_self()] {
          std::this_thread::sleep_for(std::chrono::milliseconds(200));
          pthread_kill(caller, SIGUSR1);
        }).detach();
        for (uint64_t seed = 0;; ++seed) {
          (void)lz::sum(lz::random_uniform({1 << 22}, seed)).item<float>();
        }
      },
      ::testing::ExitedWithCode(3), "");
}

// oneDNN keeps its kernels' code in static objects that exit destroys: the products still queued
// when a program exits must run before, not in unmapped code (a SIGSEGV in most runs before).
// Runs in a re-executed process, so that oneDNN is first used there.
TEST(ExitDeathTest, ExitWhileLargeProductsRunEndsCleanly) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        alarm(120);
        const lz::Tensor a = lz::ones({1500, 1500}) * 1e-3f;
        lz::Tensor y = a;
        for (int i = 0; i < 6; ++i) y = lz::matmul(y, a);
        y.eval_async();
        // Into the first product (about 0.1 s each on 2 cores), where the crash was.
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        std::exit(0);  // y stays readable: its products run at exit
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
