// When the system refuses to start a thread (a process or user at its RLIMIT_NPROC), lazuli
// raises an lz::Error saying what could not start, at the call that needed it, and keeps
// working once threads can start again; kernels run on the threads that did start. Root ignores
// RLIMIT_NPROC, so the refusal is injected: this program defines pthread_create, which
// libstdc++'s std::thread then calls instead of the C library's. Each test runs in a fresh
// process ("threadsafe" death test style), so that no stream exists before it starts.
#include <gtest/gtest.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>

#include <lazuli/lazuli.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <functional>
#include <future>
#include <iostream>
#include <string>
#include <vector>

#include "runtime/devices.h"

namespace {

std::atomic<bool> refuse_threads{false};

}  // namespace

extern "C" int pthread_create(pthread_t* thread, const pthread_attr_t* attributes,
                              void* (*start)(void*), void* argument) __THROWNL {
  using Create = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
  static const auto system_create = reinterpret_cast<Create>(dlsym(RTLD_NEXT, "pthread_create"));
  if (refuse_threads.load()) return EAGAIN;
  return system_create(thread, attributes, start, argument);
}

namespace {

/// In the child process: `call` throws lz::Error naming what could not start, at `line`.
bool raises_cannot_start(const std::function<void()>& call, unsigned line) {
  try {
    call();
  } catch (const lz::Error& error) {
    const std::string message = error.what();
    const bool named = message.find("cannot start the thread") != std::string::npos &&
                       message.find("RLIMIT_NPROC") != std::string::npos;
    const bool located = error.location().has_value() && error.location()->line() == line;
    if (!named || !located) std::cerr << "unexpected error: " << message << "\n";
    return named && located;
  } catch (const std::exception& other) {
    std::cerr << "not an lz::Error: " << other.what() << "\n";
  }
  return false;
}

// The statements of the death tests, in functions of their own: inside EXPECT_EXIT's macro
// argument every line would be reported as one.

bool every_blocking_point_raises_and_works_once_threads_start() {
  const lz::Tensor x = lz::arange(0, 4) + 1;
  refuse_threads = true;
  bool all = true;
  all &= raises_cannot_start([&] { x.eval_async(); }, __LINE__);
  all &= raises_cannot_start([&] { (void)lz::sum(x).item<float>(); }, __LINE__);
  all &= raises_cannot_start([&] { (void)x.to_vector<float>(); }, __LINE__);
  all &= raises_cannot_start([&] { lz::waitall(); }, __LINE__);
  all &= raises_cannot_start([&] { x.then([] {}); }, __LINE__);
  refuse_threads = false;
  return all && x.to_vector<float>() == std::vector<float>({1, 2, 3, 4});
}

bool then_raises_when_the_callback_thread_cannot_start() {
  // The device's stream starts, and is held busy so that the tensor is still pending when then()
  // needs the callback thread.
  std::promise<void> opened;
  lz::runtime::cpu_stream(0).submit([gate = opened.get_future().share()] { gate.wait(); });
  const lz::Tensor x = lz::arange(0, 4) + 1;
  refuse_threads = true;
  bool called = false;
  const bool raised = raises_cannot_start([&] { x.then([&] { called = true; }); }, __LINE__);
  refuse_threads = false;
  opened.set_value();
  std::promise<void> ran;
  x.then([&] { ran.set_value(); });
  ran.get_future().wait();
  lz::waitall();
  return raised && !called;  // the rejected callback never runs: its failure was raised instead
}

TEST(ThreadLimitDeathTest, EveryBlockingPointRaisesAnErrorAndWorksOnceThreadsStart) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(std::exit(every_blocking_point_raises_and_works_once_threads_start() ? 0 : 1),
              ::testing::ExitedWithCode(0), "");
}

TEST(ThreadLimitDeathTest, ThenRaisesAnErrorWhenTheCallbackThreadCannotStart) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(std::exit(then_raises_when_the_callback_thread_cannot_start() ? 0 : 1),
              ::testing::ExitedWithCode(0), "");
}

TEST(ThreadLimitDeathTest, KernelsRunOnTheThreadsThatStarted) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("LZ_NUM_THREADS", "4", 1);
        // The stream starts; a small kernel runs without the pool.
        const bool small = lz::sum(lz::arange(0, 4) + 1).item<float>() == 10.0f;
        refuse_threads = true;
        const float total = lz::sum(lz::ones({1 << 22}) * 2).item<float>();
        std::exit(small && total == 2.0f * (1 << 22) ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "started 1 of the 4 threads kernels run on");
}

}  // namespace
