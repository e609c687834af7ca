// Collectives of CUDA tensors, which NCCL moves, run by every rank of an mpirun on its own GPU
// (lz::dist::device()). Skipped without a CUDA device; CTest runs them on the CUDA emulation's
// NCCL as well. Each result must equal the same collective of the same values on the CPU, which
// MPI moves and collectives_test.cpp checks against plain loops.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "lazuli/lazuli.h"
#include "tests/require_cuda.h"

namespace {

using lz::Tensor;
using lz::dist::ReduceOp;

int rank() { return lz::dist::rank(); }
int ranks() { return lz::dist::world_size(); }

#define SKIP_WITHOUT_GPU()                                                                        \
  if (lz::dist::device().kind() != lz::Device::Kind::Cuda) {                                      \
    LAZULI_SKIP_WITHOUT_CUDA("no CUDA device for this rank: " << lz::cuda::unavailable_reason()); \
  }

/// Rank r's operand of `shape`: values that differ between ranks, with ties across ranks.
Tensor operand(int r, lz::Shape shape, lz::DType dtype) {
  const int64_t n = lz::shape_size(shape);
  std::vector<double> values(n);
  for (int64_t i = 0; i < n; ++i) values[i] = i % 2 == 0 ? i : (r + 1) * (i % 5) - 2 * r;
  return lz::from_vector(values, shape).astype(dtype);
}

/// The collective `run` of this rank's operand on its GPU equals that of the CPU exactly: the
/// values are whole numbers, so sums in any order agree.
template <class Collective>
void expect_gpu_matches_cpu(const Tensor& mine, Collective run, const std::string& what) {
  const Tensor on_cpu = run(mine);
  const Tensor on_gpu = run(mine.to(lz::dist::device()));
  EXPECT_EQ(on_gpu.device(), lz::dist::device()) << what;
  ASSERT_EQ(on_gpu.shape(), on_cpu.shape()) << what;
  EXPECT_EQ(on_gpu.to(lz::Device::cpu()).astype(lz::float64).to_vector<double>(),
            on_cpu.astype(lz::float64).to_vector<double>())
      << what;
}

TEST(CudaCollectivesTest, EveryCollectiveOfEveryDtypeMatchesTheCpus) {
  SKIP_WITHOUT_GPU();
  for (const lz::DType dtype : {lz::float32, lz::float64, lz::int32, lz::int64}) {
    const std::string name = lz::dtype_name(dtype);
    const Tensor mine = operand(rank(), {2 * ranks(), 3}, dtype);
    for (const ReduceOp op : {ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min}) {
      expect_gpu_matches_cpu(
          mine, [op](const Tensor& x) { return lz::dist::all_reduce(x, op); },
          "all_reduce " + name + " op " + std::to_string(static_cast<int>(op)));
    }
    expect_gpu_matches_cpu(
        mine, [](const Tensor& x) { return lz::dist::all_gather(x); }, "all_gather " + name);
    expect_gpu_matches_cpu(
        mine, [](const Tensor& x) { return lz::dist::reduce_scatter(x); },
        "reduce_scatter " + name);
    expect_gpu_matches_cpu(
        mine, [](const Tensor& x) { return lz::dist::broadcast(x, ranks() - 1); },
        "broadcast " + name);
  }
  const Tensor mean = operand(rank(), {2 * ranks()}, lz::float64);
  expect_gpu_matches_cpu(
      mean, [](const Tensor& x) { return lz::dist::all_reduce(x, ReduceOp::Mean); }, "mean");
  // bool's max and min are or and and: rank 0 holds {true, false, false}, the others
  // {true, true, false}.
  const Tensor flags = lz::from_vector(std::vector<bool>{true, rank() != 0, false}, {3});
  const lz::Device gpu = lz::dist::device();
  EXPECT_EQ(lz::dist::all_reduce(flags.to(gpu), ReduceOp::Max).to_vector<bool>(),
            (std::vector<bool>{true, true, false}));
  EXPECT_EQ(lz::dist::all_reduce(flags.to(gpu), ReduceOp::Min).to_vector<bool>(),
            (std::vector<bool>{true, false, false}));
}

TEST(CudaCollectivesTest, LargeCollectivesAndAnEmptyOneMatchTheCpus) {
  SKIP_WITHOUT_GPU();
  // About 3 MiB per rank, not a whole number of rounds of the emulation's 1 MiB staging (real
  // NCCL splits large collectives too), and rows of every rank's part of a reduce_scatter.
  const Tensor large = operand(rank(), {ranks() * 262147, 3}, lz::float32);
  expect_gpu_matches_cpu(
      large, [](const Tensor& x) { return lz::dist::all_reduce(x); }, "large all_reduce");
  expect_gpu_matches_cpu(
      large, [](const Tensor& x) { return lz::dist::all_gather(x); }, "large all_gather");
  expect_gpu_matches_cpu(
      large, [](const Tensor& x) { return lz::dist::reduce_scatter(x); }, "large reduce_scatter");
  expect_gpu_matches_cpu(
      large.astype(lz::float64), [](const Tensor& x) { return lz::dist::broadcast(x, 1); },
      "large broadcast");
  expect_gpu_matches_cpu(
      lz::zeros({0, 3}), [](const Tensor& x) { return lz::dist::all_reduce(x); },
      "empty all_reduce");
}

TEST(CudaCollectivesTest, GradientsAveragedOnGpusMatchTheCpus) {
  SKIP_WITHOUT_GPU();
  // A pending operand and pending consumers on the GPU: the gradient bucket is computed by a
  // kernel, all-reduced by NCCL, and read back by the kernels that split it.
  const auto gradients_on = [](lz::Device device) {
    const Tensor w = operand(0, {4, 3}, lz::float32).to(device);
    const Tensor b = operand(1, {3}, lz::float32).to(device);
    const Tensor x = operand(rank(), {5, 4}, lz::float32).to(device);
    return lz::dist::value_and_grad(
               [&](const std::vector<Tensor>& p) {
                 return lz::sum(lz::relu(lz::matmul(x, p[0]) + p[1]));
               },
               {w, b})
        .grads;
  };
  const std::vector<Tensor> on_cpu = gradients_on(lz::Device::cpu());
  const std::vector<Tensor> on_gpu = gradients_on(lz::dist::device());
  ASSERT_EQ(on_gpu.size(), on_cpu.size());
  for (size_t i = 0; i < on_cpu.size(); ++i) {
    const std::vector<float> expected = on_cpu[i].to_vector<float>();
    const std::vector<float> got = on_gpu[i].to_vector<float>();
    ASSERT_EQ(got.size(), expected.size());
    for (size_t j = 0; j < got.size(); ++j) {
      EXPECT_NEAR(got[j], expected[j], 1e-4 * (1 + std::abs(expected[j]))) << i << " " << j;
    }
  }
}

TEST(CudaCollectivesTest, RanksDisagreeingOnTheDeviceFailTogether) {
  SKIP_WITHOUT_GPU();
  // Rank 0's operand is on the CPU, the others' on their GPUs: NCCL and MPI cannot meet.
  const Tensor x = rank() == 0 ? lz::ones({4}) : lz::ones({4}).to(lz::dist::device());
  try {
    (void)lz::dist::all_reduce(x).to_vector<float>();
    FAIL() << "expected the ranks to disagree";
  } catch (const lz::Error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("reached different collectives"), std::string::npos) << message;
    EXPECT_NE(message.find("f32[4] on cuda"), std::string::npos) << message;
  }
}

// Run in processes of their own, with LZ_DIST_TIMEOUT=1: the group is unusable afterwards.
TEST(CudaCollectivesTimeoutTest, ARankLateForNcclFailsTheCollectiveOnEveryRankInTime) {
  SKIP_WITHOUT_GPU();
  // Rank 1's operand keeps its GPU busy for seconds (two products of 1024 x 1024 matrices, which
  // stay ones; 3 s or more each on the emulation's cuBLAS, a plain loop). The ranks agree on the
  // collective at once, since the operand is queued, but rank 1's NCCL call waits on its stream
  // for the operand beyond the timeout, and rank 0's waits for rank 1.
  const lz::Device gpu = lz::dist::device();
  Tensor x = lz::ones({1024, 1024}).to(gpu);
  if (rank() == 1) x = lz::matmul(lz::matmul(x, x) / 1024.0f, x) / 1024.0f;
  const auto start = std::chrono::steady_clock::now();
  try {
    (void)lz::dist::all_reduce(x).to_vector<float>();
    FAIL() << "expected the collective to fail";
  } catch (const lz::Error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("[all_sum]"), std::string::npos) << message;
    EXPECT_TRUE(message.find("within 1 s (LZ_DIST_TIMEOUT)") != std::string::npos ||
                message.find("remote process") != std::string::npos)
        << message;
  }
  // The deadline is the behaviour under test: every rank fails in bounded time (the timeout, 1 s,
  // and NCCL's abort) instead of waiting for a late rank; 30 s is far beyond either.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
  // NCCL's communicator is aborted, and the process group cannot be used any more, for the
  // host transport either.
  try {
    (void)lz::dist::all_reduce(lz::ones({2})).to_vector<float>();
    FAIL() << "expected the process group to be unusable";
  } catch (const lz::Error& error) {
    EXPECT_NE(std::string(error.what()).find("cannot be used any more"), std::string::npos)
        << error.what();
  }
}

}  // namespace
