// Programs run on a CUDA device against the same programs on the CPU (skipped without a GPU):
// elementwise chains of every dtype, views, reductions by thread, by block and split to one
// value, random leaves, moves between devices both ways (a host tensor copied in once), the
// caching allocator's reuse, clear errors for what the device does not run, matmuls through
// cuBLAS, two streams at once, a stream reading what another has not yet written, and memory
// freed while another stream's read of it is still queued.
#include <gtest/gtest.h>

#include <lazuli/lazuli.h>

#include <atomic>
#include <thread>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "runtime/cuda/staged_copy.h"
#include "runtime/devices.h"
#include "tests/cuda_test.h"

namespace {

using Program = std::function<lz::Tensor()>;

class CudaExecutionTest : public lz::test::CudaTest {
 protected:
  /// The program's values computed on `device`, as doubles.
  static std::vector<double> run_on(lz::Device device, const Program& program) {
    lz::DeviceScope scope(device);
    const lz::Tensor result = program();
    EXPECT_EQ(result.device(), device);
    std::vector<double> values;
    switch (result.dtype()) {
      case lz::DType::Float32:
        for (float v : result.to_vector<float>()) values.push_back(v);
        break;
      case lz::DType::Float64: values = result.to_vector<double>(); break;
      case lz::DType::Int32:
        for (int32_t v : result.to_vector<int32_t>()) values.push_back(v);
        break;
      case lz::DType::Int64:
        for (int64_t v : result.to_vector<int64_t>()) values.push_back(static_cast<double>(v));
        break;
      case lz::DType::Bool:
        for (bool v : result.to_vector<bool>()) values.push_back(v ? 1 : 0);
        break;
    }
    return values;
  }

  /// The GPU's values equal the CPU's within `tolerance` relative to the magnitude (0: exactly).
  static void expect_same_on_both(const std::string& what, const Program& program,
                                  double tolerance = 1e-5) {
    const std::vector<double> cpu = run_on(lz::Device::cpu(), program);
    const std::vector<double> gpu = run_on(lz::Device::cuda(), program);
    ASSERT_EQ(cpu.size(), gpu.size()) << what;
    for (size_t i = 0; i < cpu.size(); ++i) {
      if (std::isnan(cpu[i])) {
        ASSERT_TRUE(std::isnan(gpu[i])) << what << " element " << i;
        continue;
      }
      ASSERT_NEAR(gpu[i], cpu[i], tolerance * std::max(1.0, std::abs(cpu[i])))
          << what << " element " << i;
    }
  }
};

TEST_F(CudaExecutionTest, ElementwiseChainsOfEveryDtype) {
  expect_same_on_both("float32 chain", [] {
    const lz::Tensor x = lz::arange(0, 1 << 20) * 0.001f;
    return lz::exp(lz::sin(x) * 0.5f) / (lz::sqrt(x + 1) + 2) - x * x;
  });
  expect_same_on_both(
      "float64 chain",
      [] {
        const lz::Tensor x = lz::arange(0, 100003, 1, lz::float64) * 1e-3;
        return lz::tanh(x - 5) + lz::log(x + 1) * lz::cos(x);
      },
      1e-12);
  expect_same_on_both(
      "int32 arithmetic",
      [] {
        const lz::Tensor x = lz::arange(0, 4099, 1, lz::int32);
        return lz::maximum(x * 7 - 5000, lz::abs(x - 2000)) + x * x;
      },
      0);
  expect_same_on_both(
      "int64 comparisons and where",
      [] {
        const lz::Tensor x = lz::arange(-3000, 3000, 1, lz::int64);
        return lz::where(x > 0, x * 3, -x);
      },
      0);
  expect_same_on_both(
      "bool from comparisons",
      [] {
        const lz::Tensor x = lz::arange(0, 1000);
        return (x * 2 >= 999) != (x < 10);
      },
      0);
  expect_same_on_both(
      "casts", [] { return lz::astype(lz::arange(-50, 50) * 1.7f, lz::int32); }, 0);
}

TEST_F(CudaExecutionTest, ViewsReadInsideKernels) {
  expect_same_on_both(
      "transpose, slice, broadcast, concatenate",
      [] {
        const lz::Tensor m = lz::reshape(lz::arange(0, 600), {20, 30});
        const lz::Tensor t = lz::transpose(m) + lz::reshape(lz::arange(0, 20), {1, 20});
        const lz::Tensor s = lz::slice(t, {29, 0}, {-31, 20}, {-2, 3});
        return lz::concatenate({s, s * 2}, 1);
      },
      0);
}

TEST_F(CudaExecutionTest, ReductionsByThreadByBlockAndToOneValue) {
  expect_same_on_both("sum over a short axis", [] {
    return lz::sum(lz::reshape(lz::arange(0, 4000), {1000, 4}), {1});
  });
  expect_same_on_both(
      "max over a long axis",
      [] {
        return lz::max(lz::reshape(lz::sin(lz::arange(0, 1 << 16)), {16, 4096}), {1});
      },
      0);
  expect_same_on_both(
      "sum to one value (split)", [] { return lz::sum(lz::arange(0, 1 << 22) * 1e-3f); }, 1e-6);
  expect_same_on_both(
      "argmax",
      [] {
        return lz::argmax(lz::reshape(lz::cos(lz::arange(0, 1 << 16)), {64, 1024}), 1);
      },
      0);
  expect_same_on_both("softmax", [] {
    return lz::softmax(lz::reshape(lz::arange(0, 1 << 16) * 0.01f, {256, 256}));
  });
  expect_same_on_both("x - mean(x) (split with broadcast)", [] {
    const lz::Tensor x = lz::arange(0, 1 << 20) * 1e-4f;
    return x - lz::mean(x);
  });
}

TEST_F(CudaExecutionTest, RandomLeavesDrawTheSameNumbers) {
  expect_same_on_both(
      "uniform", [] { return lz::random_uniform({1 << 16}, 7, -1, 1); }, 0);
  expect_same_on_both(
      "normal", [] { return lz::random_normal({1 << 16}, 9); }, 1e-6);
}

TEST_F(CudaExecutionTest, TensorsMoveBetweenHostAndDevice) {
  const lz::Tensor host = lz::from_vector(std::vector<float>{1, 2, 3, 4}, {4});
  const lz::Tensor on_gpu = host.to(lz::Device::cuda()) * 10;
  EXPECT_EQ(on_gpu.device(), lz::Device::cuda());
  const lz::Tensor back = on_gpu.to(lz::Device::cpu()) + 1;
  EXPECT_EQ(back.to_vector<float>(), (std::vector<float>{11, 21, 31, 41}));
  EXPECT_EQ(on_gpu.to_vector<float>(), (std::vector<float>{10, 20, 30, 40}));
}

TEST_F(CudaExecutionTest, AHostTensorMovedOnceIsCopiedToTheDeviceOnce) {
  std::vector<float> values(1 << 16);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i % 97);
  const lz::Tensor on_gpu = lz::from_vector(values, {1 << 16}).to(lz::Device::cuda());
  const lz::Tensor first = on_gpu + 1;
  first.wait_to_read();  // copies the elements in, and allocates the result
  const lz::cuda::MemoryStats before = lz::cuda::memory_stats();
  const lz::Tensor second = on_gpu * 2;
  second.wait_to_read();
  const lz::cuda::MemoryStats after = lz::cuda::memory_stats();
  EXPECT_EQ(after.allocations - before.allocations, 1)
      << "the second kernel should allocate its result only, reading the copy the first made";
  EXPECT_EQ(first.to_vector<float>()[96], 97.0f);
  EXPECT_EQ(second.to_vector<float>()[200], 2.0f * static_cast<float>(200 % 97));
}

// A host buffer keeps the copy a device made of it for its life: a CPU kernel that wrote its
// output over that buffer would keep a copy of the old values in device memory for the life of
// the new ones, where nothing can read it. Such memory is never written over.
TEST_F(CudaExecutionTest, HostMemoryADeviceCopiedIsNotWrittenOver) {
  std::vector<float> values(1 << 18);  // 1 MiB: the size from which outputs take dying inputs
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i % 97);
  lz::Tensor y;
  {
    const lz::Tensor x = lz::from_vector(values, {1 << 18});
    EXPECT_EQ((x.to(lz::Device::cuda()) + 1).to_vector<float>()[96], 97.0f);
    y = x * 2 + 1;
  }  // only y's pending op reads x now, but the device's copy of x's buffer remains
  lz::reset_stats();
  EXPECT_EQ(y.to_vector<float>()[200], 2.0f * static_cast<float>(200 % 97) + 1);
  EXPECT_EQ(lz::stats().outputs_written_in_place, 0);
  EXPECT_EQ(y.to(lz::Device::cuda()).to_vector<float>()[200],
            2.0f * static_cast<float>(200 % 97) + 1);
}

TEST_F(CudaExecutionTest, FreedDeviceMemoryIsReusedAndCanBeGivenBack) {
  lz::DeviceScope scope(lz::Device::cuda());
  const auto evaluate_and_drop = [] {
    const lz::Tensor x = lz::arange(0, 1 << 18) * 2;
    EXPECT_EQ(x.to_vector<float>()[5], 10.0f);
  };
  evaluate_and_drop();
  const lz::cuda::MemoryStats before = lz::cuda::memory_stats();
  EXPECT_GT(before.bytes_cached, 0) << "the dropped tensor's memory was not kept for reuse";
  evaluate_and_drop();
  const lz::cuda::MemoryStats after = lz::cuda::memory_stats();
  EXPECT_GT(after.reuses, before.reuses);
  EXPECT_EQ(after.device_allocations, before.device_allocations)
      << "the same size on the same stream should come from the cache";
  lz::cuda::empty_cache();
  const lz::cuda::MemoryStats emptied = lz::cuda::memory_stats();
  EXPECT_EQ(emptied.bytes_cached, 0);
  EXPECT_EQ(emptied.cache_flushes, after.cache_flushes + 1);
}

TEST_F(CudaExecutionTest, ATensorMovesBetweenTwoDevices) {
  if (lz::cuda::device_count() < 2) GTEST_SKIP() << "one CUDA device";
  lz::Tensor on_zero;
  {
    lz::DeviceScope scope(lz::Device::cuda(0));
    on_zero = lz::arange(0, 1000) * 3;
  }
  const lz::Tensor on_one = on_zero.to(lz::Device::cuda(1)) + 1;
  EXPECT_EQ(on_one.device(), lz::Device::cuda(1));
  const std::vector<float> values = on_one.to_vector<float>();
  for (size_t i = 0; i < values.size(); i += 37) {
    ASSERT_EQ(values[i], static_cast<float>(i) * 3 + 1) << "element " << i;
  }
}

TEST_F(CudaExecutionTest, MatmulsGoThroughCublasWithTheirEpilogue) {
  expect_same_on_both(
      "float32 with bias and relu",
      [] {
        const lz::Tensor a = lz::random_uniform({300, 200}, 1, -1, 1);
        const lz::Tensor b = lz::random_uniform({200, 150}, 2, -1, 1);
        return lz::relu(lz::matmul(a, b) + lz::arange(0, 150) * 0.01f);
      },
      1e-4);
  expect_same_on_both(
      "float64, batched with a broadcast operand",
      [] {
        const lz::Tensor a = lz::astype(lz::random_uniform({3, 4, 40, 30}, 3), lz::float64);
        const lz::Tensor b = lz::astype(lz::random_uniform({4, 30, 20}, 4), lz::float64);
        return lz::matmul(a, b);
      },
      1e-12);
  expect_same_on_both(
      "x @ x",
      [] {
        const lz::Tensor x = lz::random_uniform({64, 64}, 5);
        return lz::matmul(x, x);
      },
      1e-5);
  // cuBLAS reads a transposed operand in place, from the transpose's input.
  for (const auto& [a_transposed, b_transposed] :
       {std::pair(true, false), std::pair(false, true), std::pair(true, true)}) {
    expect_same_on_both(
        std::string("batched, operands read transposed: ") + (a_transposed ? "a" : "") +
            (b_transposed ? "b" : ""),
        [a_transposed, b_transposed] {
          const lz::Tensor a = lz::random_uniform({2, 30, 40}, 6, -1, 1);
          const lz::Tensor b = lz::random_uniform({2, 50, 30}, 7, -1, 1);
          a.wait_to_read();
          b.wait_to_read();
          const lz::Tensor left =
              a_transposed ? lz::transpose(a, {0, 2, 1}) : lz::reshape(a, {2, 40, 30});
          const lz::Tensor right =
              b_transposed ? lz::transpose(b, {0, 2, 1}) : lz::reshape(b, {2, 30, 50});
          return lz::matmul(left, right);
        },
        1e-4);
  }
}

TEST_F(CudaExecutionTest, AnIntegerMatmulIsRefusedNamingTheOpAndTheDeviceGoesOn) {
  lz::DeviceScope scope(lz::Device::cuda());
  const lz::Tensor ints = lz::arange(0, 16, 1, lz::int32);
  const lz::Tensor product = lz::matmul(lz::reshape(ints, {4, 4}), lz::reshape(ints, {4, 4}));
  try {
    product.wait_to_read();
    FAIL() << "expected lz::Error";
  } catch (const lz::Error& error) {
    EXPECT_NE(std::string(error.what()).find("[matmul] recorded at"), std::string::npos)
        << error.what();
  }
  EXPECT_EQ((lz::ones({3}) * 2).to_vector<float>(), (std::vector<float>{2, 2, 2}))
      << "the device keeps working after the failure";
}

TEST_F(CudaExecutionTest, TwoStreamsComputeIndependentWork) {
  lz::DeviceScope scope(lz::Device::cuda());
  lz::Tensor a;
  lz::Tensor b;
  {
    lz::StreamScope stream(0);
    a = lz::sum(lz::arange(0, 1 << 20));
    a.eval_async();
  }
  {
    lz::StreamScope stream(1);
    b = lz::sum(lz::arange(0, 1 << 10));
    b.eval_async();
  }
  lz::waitall();
  EXPECT_NEAR(a.item<float>(), 549755289600.0, 549755289600.0 * 1e-6);
  EXPECT_EQ(b.item<float>(), 523776.0f);
}

TEST_F(CudaExecutionTest, AStreamReadsWhatAnotherStreamWrote) {
  lz::DeviceScope scope(lz::Device::cuda());
  lz::Tensor slow;
  lz::Tensor a;
  lz::Tensor b;
  {
    lz::StreamScope stream(2);
    slow = lz::sum(lz::exp(lz::sin(lz::arange(0, 1 << 22) / (1 << 20))));
    slow.eval_async();
  }
  {
    lz::StreamScope stream(0);
    a = lz::arange(0, 1 << 20) * 3 + slow * 0;  // written once stream 2 is done
    a.eval_async();
  }
  {
    lz::StreamScope stream(1);
    b = a * 2 + 1;  // queued on stream 1 while a is still unwritten
    b.eval_async();
  }
  const std::vector<float> values = b.to_vector<float>();
  for (size_t i = 0; i < values.size(); i += 4099) {
    ASSERT_EQ(values[i], static_cast<float>(i) * 6 + 1) << "element " << i;
  }
}

TEST_F(CudaExecutionTest, MemoryFreedAfterAReadOnAnotherStreamIsNotReusedUnderTheReader) {
  lz::DeviceScope scope(lz::Device::cuda());
  constexpr int64_t kLength = 1 << 20;
  lz::Tensor a;
  {
    lz::StreamScope stream(0);
    a = lz::arange(0, kLength) * 3;
    a.eval_async();
  }
  lz::Tensor slow;
  lz::Tensor b;
  {
    lz::StreamScope stream(1);
    // Work queued ahead of the read on stream 1, so that stream 0 is free to run on meanwhile.
    slow = lz::sum(lz::exp(lz::sin(lz::arange(0, 4 * kLength) / kLength)));
    slow.eval_async();
    b = a * 2 + 1;
    b.eval_async();
  }
  // Once stream 1's thread has queued both launches on the device, a's last holder is `a`.
  lz::runtime::device_stream(lz::Device::cuda(), 1).synchronize();
  const lz::cuda::MemoryStats before = lz::cuda::memory_stats();
  a = lz::Tensor();
  const lz::cuda::MemoryStats freed = lz::cuda::memory_stats();
  ASSERT_EQ(freed.bytes_cached, before.bytes_cached + kLength * 4) << "a's block was not freed";
  lz::Tensor overwrite;
  {
    lz::StreamScope stream(0);
    // a's size on a's stream: a's block, were it reused before stream 1 has read a.
    overwrite = lz::arange(0, kLength) + 7;
    overwrite.eval_async();
  }
  const std::vector<float> values = b.to_vector<float>();
  for (size_t i = 0; i < values.size(); i += 4099) {
    ASSERT_EQ(values[i], static_cast<float>(i) * 6 + 1) << "element " << i;
  }
  EXPECT_EQ(overwrite.to_vector<float>()[3], 10.0f);
}

TEST_F(CudaExecutionTest, LargeTensorsCrossInChunksThroughThePageLockedStaging) {
  // Over five staging chunks and a tail each way, two tensors on two streams taking turns.
  constexpr int64_t kLength = 5 * lz::runtime::cuda::kStagingChunkBytes / sizeof(float) + 12345;
  std::vector<float> first(kLength);
  std::vector<float> second(kLength);
  for (int64_t i = 0; i < kLength; ++i) {
    first[static_cast<size_t>(i)] = static_cast<float>(i % 1000) * 0.5f;
    second[static_cast<size_t>(i)] = static_cast<float>(i % 777);
  }
  lz::Tensor on_gpu_first;
  lz::Tensor on_gpu_second;
  {
    lz::DeviceScope scope(lz::Device::cuda());
    lz::StreamScope stream(0);
    on_gpu_first = lz::from_vector(first, {kLength}).to(lz::Device::cuda()) + 1;
    on_gpu_first.eval_async();
  }
  {
    lz::DeviceScope scope(lz::Device::cuda());
    lz::StreamScope stream(1);
    on_gpu_second = lz::from_vector(second, {kLength}).to(lz::Device::cuda()) * 2;
    on_gpu_second.eval_async();
  }
  const std::vector<float> first_back = on_gpu_first.to_vector<float>();
  const std::vector<float> second_back = on_gpu_second.to_vector<float>();
  ASSERT_EQ(first_back.size(), first.size());
  ASSERT_EQ(second_back.size(), second.size());
  for (size_t i = 0; i < first.size(); ++i) {
    ASSERT_EQ(first_back[i], first[i] + 1) << "element " << i;
    ASSERT_EQ(second_back[i], second[i] * 2) << "element " << i;
  }
}

TEST_F(CudaExecutionTest, ThenCallbacksRunOnceTheDeviceHasComputedTheValue) {
  // The launch is only queued on the device when its stream keeps the promise.
  const Program slow_sum = [] {
    return lz::sum(lz::exp(lz::sin(lz::arange(0, 1 << 22) / (1 << 20))));
  };
  lz::DeviceScope scope(lz::Device::cuda());
  const lz::Tensor slow = slow_sum();
  std::atomic<bool> called{false};
  std::atomic<bool> ready_in_callback{false};
  slow.then([&] {
    ready_in_callback = slow.is_ready();
    called = true;
  });
  lz::waitall();
  ASSERT_TRUE(called);
  EXPECT_TRUE(ready_in_callback) << "the callback ran before the device computed the value";
  EXPECT_TRUE(slow.is_ready());
  const double on_cpu = run_on(lz::Device::cpu(), slow_sum)[0];
  EXPECT_NEAR(slow.item<float>(), on_cpu, 1e-4 * std::abs(on_cpu));
}

TEST_F(CudaExecutionTest, AnotherThreadUploadsReadsAndFreesDeviceMemory) {
  // Each thread's first driver call must find the device's context current.
  const lz::Tensor host = lz::arange(0, 4096);
  float first = 0;
  std::thread worker([&] {
    lz::DeviceScope scope(lz::Device::cuda());
    const lz::Tensor on_gpu = host.to(lz::Device::cuda()) + 1;
    first = on_gpu.to_vector<float>()[10];
  });
  worker.join();
  EXPECT_EQ(first, 11.0f);
}

}  // namespace
