// Random programs over 2 logical devices x 3 streams, recorded by several threads at once,
// launched and read back at random points; every value is checked against the same program
// computed in plain C++ doubles. Values stay small integers and halves, so float64 is exact.
#include <gtest/gtest.h>

#include <lazuli/lazuli.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <random>
#include <thread>
#include <vector>

namespace {

constexpr int64_t kLength = 64;

struct Value {
  lz::Tensor tensor;
  std::vector<double> expected;
};

std::vector<double> elementwise(const std::vector<double>& a, const std::vector<double>& b,
                                double (*op)(double, double)) {
  std::vector<double> result(a.size());
  for (size_t i = 0; i < a.size(); ++i) result[i] = op(a[i], b[i]);
  return result;
}

/// One thread's random program: `steps` ops over a pool of values on random devices and
/// streams. Returns the number of mismatches found (each reported through gtest).
int run_random_program(uint32_t seed, int steps) {
  std::mt19937 random(seed);
  const auto pick = [&](int count) { return static_cast<int>(random() % count); };
  std::vector<Value> pool;
  int mismatches = 0;
  const auto check = [&](const Value& value, const char* when) {
    const std::vector<double> actual = value.tensor.to_vector<double>();
    if (actual != value.expected) {
      ++mismatches;
      ADD_FAILURE() << "seed " << seed << " " << when << ": first element " << actual[0]
                    << " expected " << value.expected[0];
    }
  };
  for (int step = 0; step < steps; ++step) {
    lz::DeviceScope device(lz::Device::cpu(pick(2)));
    lz::StreamScope stream(pick(3));
    const int action = pool.size() < 2 ? 0 : pick(10);
    if (action == 0) {  // a new leaf on the scope's device
      std::vector<double> data(kLength);
      for (double& x : data) x = pick(21) - 10;
      pool.push_back({lz::from_vector(data, {kLength}, lz::default_device()), data});
    } else if (action <= 6) {  // a binary op; the second operand moves to the first's device
      const Value& a = pool[pick(static_cast<int>(pool.size()))];
      const Value& b = pool[pick(static_cast<int>(pool.size()))];
      const lz::Tensor b_there = b.tensor.to(a.tensor.device());
      switch (pick(4)) {
        case 0:
          pool.push_back(
              {a.tensor + b_there,
               elementwise(a.expected, b.expected, [](double x, double y) { return x + y; })});
          break;
        case 1:
          pool.push_back(
              {a.tensor - b_there,
               elementwise(a.expected, b.expected, [](double x, double y) { return x - y; })});
          break;
        case 2:
          pool.push_back({lz::maximum(a.tensor, b_there),
                          elementwise(a.expected, b.expected,
                                      [](double x, double y) { return std::max(x, y); })});
          break;
        default:
          pool.push_back({lz::minimum(a.tensor, b_there) * 0.5,
                          elementwise(a.expected, b.expected,
                                      [](double x, double y) { return std::min(x, y) * 0.5; })});
          break;
      }
    } else if (action == 7) {  // launch something without waiting
      pool[pick(static_cast<int>(pool.size()))].tensor.eval_async();
    } else if (action == 8) {  // read something back now
      check(pool[pick(static_cast<int>(pool.size()))], "at a blocking point");
    } else {  // drop a value (its pending graph may still be needed by others)
      pool.erase(pool.begin() + pick(static_cast<int>(pool.size())));
    }
  }
  for (const Value& value : pool) check(value, "at the end");
  return mismatches;
}

TEST(AsyncStressTest, RandomProgramsOnTwoDevicesAndThreeStreamsMatchPlainCpp) {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    EXPECT_EQ(run_random_program(seed, 200), 0) << "seed " << seed;
  }
  lz::waitall();
}

TEST(AsyncStressTest, FourThreadsRunRandomProgramsAtOnce) {
  std::vector<std::thread> threads;
  std::vector<int> mismatches(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t, &mismatches] {
      for (uint32_t round = 0; round < 5; ++round) {
        mismatches[t] += run_random_program(1000 + 10 * t + round, 200);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(mismatches[t], 0) << "thread " << t;
  lz::waitall();
}

// The passes run outside the graph lock: while one thread's evaluations run them (each graph of
// a new length, so the plan cache misses every time), four others record and read their own
// chains.
TEST(AsyncStressTest, FourThreadsRecordWhileAnotherRunsThePasses) {
  constexpr int kRounds = 12, kRecorders = 4, kSteps = 40;
  std::atomic<bool> optimizing{true};
  std::vector<int> mismatches(kRecorders + 1);
  std::thread optimizer([&] {
    for (int round = 0; round < kRounds; ++round) {
      lz::Tensor x = lz::arange(0, kLength, 1, lz::float64);
      std::vector<double> expected(kLength);
      for (int64_t i = 0; i < kLength; ++i) expected[i] = static_cast<double>(i);
      for (int step = 0; step < 300 + round; ++step) {
        x = x * 0.5 + 1;
        for (double& value : expected) value = value * 0.5 + 1;
      }
      mismatches[kRecorders] += x.to_vector<double>() == expected ? 0 : 1;
    }
    optimizing = false;
  });
  std::vector<std::thread> recorders;
  for (int t = 0; t < kRecorders; ++t) {
    recorders.emplace_back([t, &optimizing, &mismatches] {
      do {
        lz::Tensor y = lz::full({kLength}, t, lz::float64);
        for (int step = 0; step < kSteps; ++step) y = y + 1;
        const std::vector<double> values = y.to_vector<double>();
        mismatches[t] += std::all_of(values.begin(), values.end(),
                                     [t](double value) { return value == t + kSteps; })
                             ? 0
                             : 1;
      } while (optimizing);
    });
  }
  optimizer.join();
  for (std::thread& recorder : recorders) recorder.join();
  for (int t = 0; t <= kRecorders; ++t) EXPECT_EQ(mismatches[t], 0) << "thread " << t;
  lz::waitall();
}

}  // namespace
