// Outputs written over inputs that die in their kernel (runtime::ExecutionOptions::
// in_place_from_bytes): when it happens, the values it must not change, and every case where it
// must not happen because something can still read the input.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include <lazuli/lazuli.h>

namespace {

constexpr int64_t kElements = int64_t{1} << 18;  // 1 MiB of float32: written in place
constexpr int64_t kBytes = kElements * 4;

std::vector<float> ramp() {
  std::vector<float> values(kElements);
  for (int64_t i = 0; i < kElements; ++i) values[i] = static_cast<float>(i % 1000) * 0.5f;
  return values;
}

/// x * 2 + 1, element by element.
std::vector<float> doubled_plus_one(const std::vector<float>& x) {
  std::vector<float> result;
  for (const float value : x) result.push_back(value * 2 + 1);
  return result;
}

class InPlaceTest : public ::testing::Test {
 protected:
  void SetUp() override { lz::waitall(); }
};

TEST_F(InPlaceTest, AnInputNothingElseReadsIsWrittenOver) {
  const std::vector<float> values = ramp();
  lz::Tensor y;
  {
    const lz::Tensor x = lz::from_vector(values, {kElements});
    y = x * 2.0f + 1.0f;
  }  // only y's pending op reads x now
  lz::reset_stats();
  EXPECT_EQ(y.to_vector<float>(), doubled_plus_one(values));
  EXPECT_EQ(lz::stats().outputs_written_in_place, 1);
  EXPECT_EQ(lz::stats().bytes_allocated, 0) << "y took new memory instead of x's";
}

TEST_F(InPlaceTest, AHeldInputIsNotWrittenOver) {
  const std::vector<float> values = ramp();
  const lz::Tensor x = lz::from_vector(values, {kElements});
  const lz::Tensor y = x * 2.0f + 1.0f;
  lz::reset_stats();
  EXPECT_EQ(y.to_vector<float>(), doubled_plus_one(values));
  EXPECT_EQ(lz::stats().outputs_written_in_place, 0);
  EXPECT_EQ(lz::stats().bytes_allocated, kBytes);
  EXPECT_EQ(x.to_vector<float>(), values);
}

TEST_F(InPlaceTest, AnInputAPendingTensorStillReadsIsNotWrittenOver) {
  const std::vector<float> values = ramp();
  lz::Tensor y, z;
  {
    const lz::Tensor x = lz::from_vector(values, {kElements});
    y = x * 2.0f + 1.0f;
    z = x - 3.0f;  // left pending by y's evaluation: it reads x later
  }
  lz::reset_stats();
  EXPECT_EQ(y.to_vector<float>(), doubled_plus_one(values));
  EXPECT_EQ(lz::stats().outputs_written_in_place, 0);
  const std::vector<float> z_values = z.to_vector<float>();
  for (int64_t i = 0; i < kElements; i += 997) ASSERT_EQ(z_values[i], values[i] - 3.0f) << i;
}

TEST_F(InPlaceTest, MemoryTwoResultsShareIsNotWrittenOver) {
  const std::vector<float> values = ramp();
  const lz::Tensor x = lz::from_vector(values, {kElements});
  const lz::Tensor a = x * 2.0f;
  lz::Tensor y;
  {
    const lz::Tensor b = x * 2.0f;  // the same op: computed once, a and b show one buffer
    lz::waitall();
    y = b + 1.0f;
  }  // only y's pending op reads b, but a still shows its memory
  lz::reset_stats();
  EXPECT_EQ(y.to_vector<float>(), doubled_plus_one(values));
  EXPECT_EQ(lz::stats().outputs_written_in_place, 0);
  const std::vector<float> a_values = a.to_vector<float>();
  for (int64_t i = 0; i < kElements; i += 997) ASSERT_EQ(a_values[i], values[i] * 2) << i;
}

TEST_F(InPlaceTest, AnInputTheKernelReadsAtOtherPositionsIsNotWrittenOver) {
  constexpr int64_t kSide = 512;  // a square matrix of 1 MiB: its transpose has its size
  const std::vector<float> values = ramp();
  lz::Tensor y;
  {
    const lz::Tensor x = lz::from_vector(values, {kSide, kSide});
    y = lz::transpose(x) + x;  // element (i, j) reads (j, i): writing over x would change it
  }
  const std::vector<float> result = y.to_vector<float>();
  for (int64_t i = 0; i < kSide; i += 7) {
    for (int64_t j = 0; j < kSide; j += 5) {
      ASSERT_EQ(result[i * kSide + j], values[j * kSide + i] + values[i * kSide + j])
          << "(" << i << ", " << j << ")";
    }
  }
}

TEST_F(InPlaceTest, AnInputALaunchOnAnotherStreamReadsIsNotWrittenOver) {
  const std::vector<float> values = ramp();
  // Stream 1 is busy with products, so its launch reading x waits in its queue, holding x,
  // while stream 0 computes y from x.
  const lz::Tensor a = lz::random_normal({768, 768}, 3);
  lz::Tensor busy, other, y;
  {
    const lz::Tensor x = lz::from_vector(values, {kElements});
    {
      const lz::StreamScope second(1);
      busy = a;
      for (int i = 0; i < 8; ++i) busy = lz::matmul(busy, a) * 0.01f;
      lz::eval_async({busy});
      other = x + 1.0f;
      lz::eval_async({other});
    }
    y = x * 2.0f + 1.0f;
  }
  lz::reset_stats();
  EXPECT_EQ(y.to_vector<float>(), doubled_plus_one(values));
  // The products (about 7 GFLOP) still run: other's launch holds x, so y took memory of its own.
  EXPECT_EQ(lz::stats().outputs_written_in_place, 0);
  const std::vector<float> other_values = other.to_vector<float>();
  for (int64_t i = 0; i < kElements; i += 997) ASSERT_EQ(other_values[i], values[i] + 1.0f) << i;
  lz::waitall();
}

// Adam's new parameters and moments take the old ones' memory: a step allocates its gradients
// and activations, not a second copy of its state.
TEST_F(InPlaceTest, AnAdamStepWritesTheNewStateOverTheOld) {
  const std::vector<int64_t> sizes{16, 1024, 1024, 10};  // one 4 MiB weight
  std::vector<lz::Tensor> params = lz::nn::mlp_parameters(sizes, 5);
  const lz::Tensor x = lz::random_normal({8, 16}, 6);
  const lz::Tensor labels = lz::arange(0, 8).astype(lz::int64);
  lz::optim::Adam adam({.learning_rate = 1e-3});
  const auto step = [&] {
    auto [loss, grads] = lz::value_and_grad(
        [&](const std::vector<lz::Tensor>& p) {
          return lz::cross_entropy(lz::nn::mlp(p, x), labels);
        },
        params);
    adam.step(params, grads);
    return loss.item<float>();
  };
  step();
  step();  // the moments exist from here on
  lz::waitall();
  lz::reset_stats();
  step();
  lz::waitall();
  const lz::Stats stats = lz::stats();
  constexpr int64_t kLargeWeightBytes = 1024 * 1024 * 4;
  // Its gradient (4 MiB) and small buffers; the parameter and moments beside the old ones would
  // add 12 MiB.
  EXPECT_LT(stats.bytes_allocated, 2 * kLargeWeightBytes);
  EXPECT_EQ(stats.outputs_written_in_place, 3) << "the weight, and its two moments";
}

TEST(HostMemoryStatsTest, ThePeakIsTheMostBytesAliveAtOnceSinceTheReset) {
  lz::waitall();
  lz::reset_stats();
  const int64_t before = lz::stats().bytes_in_use;
  EXPECT_EQ(lz::stats().peak_bytes_in_use, before);
  {
    const lz::Tensor x = lz::from_vector(ramp(), {kElements});
    const lz::Tensor y = x * 2.0f;  // x is held: y gets memory of its own
    y.wait_to_read();
    EXPECT_EQ(lz::stats().bytes_in_use, before + 2 * kBytes);
  }
  lz::waitall();
  EXPECT_EQ(lz::stats().bytes_in_use, before);
  EXPECT_EQ(lz::stats().peak_bytes_in_use, before + 2 * kBytes);
  lz::reset_stats();
  EXPECT_EQ(lz::stats().peak_bytes_in_use, before);
}

}  // namespace
