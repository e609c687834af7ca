// Fusion seen from the user's side: how many kernels an evaluation launches (lz::stats()).
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include <lazuli/lazuli.h>

namespace {

class KernelCountTest : public ::testing::Test {
 protected:
  void SetUp() override {
    lz::waitall();
    lz::set_fusion(true);
    lz::reset_stats();
  }
  void TearDown() override { lz::set_fusion(true); }

  const lz::Tensor a = lz::random_uniform({64, 32}, 1);
  const lz::Tensor b = lz::random_uniform({64, 32}, 2);
  const lz::Tensor c = lz::random_uniform({64, 32}, 3);

  /// Evaluates `result` and returns the kernels it took. Its inputs must already be computed.
  int64_t kernels_for(const lz::Tensor& result) {
    lz::reset_stats();
    result.wait_to_read();
    return lz::stats().kernels_launched;
  }
};

TEST_F(KernelCountTest, ChainOfSevenElementwiseOpsIsOneKernel) {
  a.wait_to_read(), b.wait_to_read(), c.wait_to_read();
  const lz::Tensor result = ((a * b + c) * a - b) * 0.5 + c * c;
  EXPECT_EQ(kernels_for(result), 1);
}

TEST_F(KernelCountTest, ChainWithFusionOffIsOneKernelPerOp) {
  a.wait_to_read(), b.wait_to_read(), c.wait_to_read();
  lz::set_fusion(false);
  const lz::Tensor result = ((a * b + c) * a - b) * 0.5 + c * c;
  // mul add mul sub full(0.5) mul mul add: eight recorded nodes, eight launches.
  EXPECT_EQ(kernels_for(result), 8);
}

TEST_F(KernelCountTest, BroadcastingChainIsStillOneKernel) {
  const lz::Tensor row = lz::random_uniform({32}, 4);
  const lz::Tensor column = lz::random_uniform({64, 1}, 5);
  a.wait_to_read(), row.wait_to_read(), column.wait_to_read();
  EXPECT_EQ(kernels_for(lz::exp(a * row - column) + row), 1);
}

TEST_F(KernelCountTest, ReductionAbsorbsItsElementwiseProducers) {
  a.wait_to_read(), b.wait_to_read(), c.wait_to_read();
  EXPECT_EQ(kernels_for(lz::sum(a * b + c)), 1);
}

TEST_F(KernelCountTest, SoftmaxOverTheLastAxisIsAtMostTwoKernels) {
  a.wait_to_read();
  EXPECT_LE(kernels_for(lz::softmax(a, -1)), 2);
}

TEST_F(KernelCountTest, FusedResultsEqualUnfusedResults) {
  const lz::Tensor fused = lz::softmax(a * b + c, 0);
  const std::vector<float> fused_values = fused.to_vector<float>();
  lz::set_fusion(false);
  const lz::Tensor unfused = lz::softmax(a * b + c, 0);
  EXPECT_EQ(unfused.to_vector<float>(), fused_values) << "both are interpreted op by op";
}

namespace {

/// Checks `product` ([rows, columns]) against the sums over k < depth of left(i, k) * right(k, j).
template <class Left, class Right>
void expect_product(const lz::Tensor& product, int64_t rows, int64_t columns, int64_t depth,
                    Left left, Right right) {
  const std::vector<float> values = product.to_vector<float>();
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < columns; ++j) {
      double expected = 0;
      for (int64_t k = 0; k < depth; ++k) expected += double(left(i, k)) * right(k, j);
      ASSERT_NEAR(values[i * columns + j], expected, 1e-4) << i << ", " << j;
    }
  }
}

}  // namespace

// A dense layer's gradients read its input and weights transposed: the matmul reads them in
// place, so each product is one kernel and no transposed copy is written.
TEST_F(KernelCountTest, MatmulReadsTransposedOperandsWithoutACopy) {
  const lz::Tensor g = lz::random_uniform({64, 16}, 4);
  const lz::Tensor w = lz::random_uniform({32, 16}, 5);
  for (const lz::Tensor& computed : {a, g, w}) computed.wait_to_read();
  const lz::Tensor weight_gradient = lz::matmul(lz::transpose(a), g);
  const lz::Tensor input_gradient = lz::matmul(g, lz::transpose(w));
  EXPECT_EQ(kernels_for(weight_gradient), 1);
  EXPECT_EQ(kernels_for(input_gradient), 1);

  const std::vector<float> av = a.to_vector<float>(), gv = g.to_vector<float>(),
                           wv = w.to_vector<float>();
  expect_product(
      weight_gradient, 32, 16, 64, [&](int64_t i, int64_t k) { return av[k * 32 + i]; },
      [&](int64_t k, int64_t j) { return gv[k * 16 + j]; });
  expect_product(
      input_gradient, 64, 32, 16, [&](int64_t i, int64_t k) { return gv[i * 16 + k]; },
      [&](int64_t k, int64_t j) { return wv[j * 16 + k]; });
}

TEST(StatsTest, CountsEvaluationsNodesAndBytes) {
  lz::waitall();
  lz::reset_stats();
  const lz::Tensor x = lz::arange(0, 1000) * 2;  // arange, full, mul
  x.wait_to_read();
  const lz::Stats stats = lz::stats();
  EXPECT_EQ(stats.evaluations, 1);
  EXPECT_EQ(stats.nodes_evaluated, 3);
  EXPECT_GE(stats.bytes_allocated, 1000 * 4) << "at least the float32 result";
  EXPECT_EQ(stats.kernels_compiled + stats.cache_hits, 1) << "one kernel, compiled or cached";
  lz::reset_stats();
  EXPECT_EQ(lz::stats().evaluations, 0);
}

}  // namespace

// A minibatch loop reads a new window each step: the slice's starts are runtime scalars of the
// compiled kernel, so the hundred windows share one compiled kernel (compiled or loaded from the
// disk cache once, then found in memory), and one run of the passes.
TEST(RecompileTest, ALoopOverWindowsCompilesTheKernelOnce) {
  constexpr int64_t kRows = 13, kColumns = 7, kWindows = 100;
  const lz::Tensor data = lz::random_uniform({kRows * kWindows, kColumns}, 11);
  const std::vector<float> values = data.to_vector<float>();
  lz::reset_stats();
  for (int64_t w = 0; w < kWindows; ++w) {
    const lz::Tensor window = lz::slice(data, {w * kRows, 0}, {(w + 1) * kRows, kColumns});
    const std::vector<float> sums = lz::sum(window * 2 + 1, {1}).to_vector<float>();
    ASSERT_EQ(sums.size(), static_cast<size_t>(kRows));
    for (int64_t r = 0; r < kRows; ++r) {
      double expected = 0;
      for (int64_t c = 0; c < kColumns; ++c) {
        expected += 2.0 * values[(w * kRows + r) * kColumns + c] + 1.0;
      }
      ASSERT_NEAR(sums[r], expected, 1e-4) << "window " << w << ", row " << r;
    }
  }
  const lz::Stats stats = lz::stats();
  EXPECT_EQ(stats.kernels_launched, kWindows);
  EXPECT_EQ(stats.kernels_compiled + stats.disk_cache_hits, 1)
      << stats.kernels_compiled << " compiled, " << stats.disk_cache_hits << " from disk";
  EXPECT_EQ(stats.plan_misses, 1) << "a window's starts are values, not structure";
}

// A loop over minibatches of changing sizes: each step reads a window at a new offset, with a
// new batch size and row length. Offsets and extents are runtime scalars of the compiled kernels,
// so the kernels of the first step serve all hundred.
TEST(RecompileTest, ALoopOverOffsetsBatchSizesAndRowLengthsCompilesEachKernelOnce) {
  constexpr int64_t kDataRows = 200, kDataColumns = 70, kSteps = 100;
  const lz::Tensor data = lz::random_uniform({kDataRows, kDataColumns}, 31, -1, 1);
  const lz::Tensor bias = lz::random_uniform({kDataColumns}, 32, -1, 1);
  const std::vector<float> values = data.to_vector<float>();
  const std::vector<float> biases = bias.to_vector<float>();
  lz::reset_stats();
  int64_t built_by_the_first_step = 0;
  for (int64_t step = 0; step < kSteps; ++step) {
    // Batch sizes 16, 18, ..., 34 and row lengths 37, 40, ..., 64: never equal to each other or
    // to the data's extents, so every step has the same kernel keys.
    const int64_t offset = step, batch = 16 + 2 * (step % 10), length = 37 + 3 * (step / 10);
    const lz::Tensor window = lz::slice(data, {offset, 0}, {offset + batch, length});
    const lz::Tensor row_sums = lz::sum(lz::relu(window * 2 + lz::slice(bias, {0}, {length})), {1});
    const lz::Tensor column_maxima = lz::max(lz::transpose(window, {1, 0}), {1});
    const std::vector<float> sums = row_sums.to_vector<float>();
    const std::vector<float> maxima = column_maxima.to_vector<float>();
    ASSERT_EQ(sums.size(), static_cast<size_t>(batch));
    ASSERT_EQ(maxima.size(), static_cast<size_t>(length));
    for (int64_t r = 0; r < batch; ++r) {
      double expected = 0;
      for (int64_t c = 0; c < length; ++c) {
        expected += std::max(0.0, 2.0 * values[(offset + r) * kDataColumns + c] + biases[c]);
      }
      ASSERT_NEAR(sums[r], expected, 1e-4) << "step " << step << ", row " << r;
    }
    for (int64_t c = 0; c < length; ++c) {
      float expected = values[offset * kDataColumns + c];
      for (int64_t r = 1; r < batch; ++r) {
        expected = std::max(expected, values[(offset + r) * kDataColumns + c]);
      }
      ASSERT_EQ(maxima[c], expected) << "step " << step << ", column " << c;
    }
    const lz::Stats stats = lz::stats();
    if (step == 0) built_by_the_first_step = stats.kernels_compiled + stats.disk_cache_hits;
  }
  const lz::Stats stats = lz::stats();
  EXPECT_GE(built_by_the_first_step, 2);
  EXPECT_EQ(stats.kernels_compiled + stats.disk_cache_hits, built_by_the_first_step)
      << stats.kernels_compiled << " compiled, " << stats.disk_cache_hits << " from disk";
}

// A training loop records the same step again and again: the passes run for the first step
// only, and every later step reuses their result with its own data and scalars.
TEST(PlanCacheTest, ALoopOfTheSameStepRunsThePassesOnce) {
  constexpr int kSteps = 10, kSize = 6;
  lz::set_plan_cache(true);
  lz::waitall();
  std::vector<float> weights(kSize, 0.5f);
  lz::Tensor w = lz::from_vector(weights, {kSize});
  w.wait_to_read();
  lz::reset_stats();
  for (int step = 0; step < kSteps; ++step) {
    std::vector<float> x(kSize);
    for (int i = 0; i < kSize; ++i) x[i] = static_cast<float>(step + i) / 4;
    const float rate = 0.01f * static_cast<float>(step + 3);  // a new scalar every step
    // w <- w - rate * (w * x - 1) * x, the gradient of (w x - 1)^2 / 2
    w = w - rate * ((w * lz::from_vector(x, {kSize}) - 1) * lz::from_vector(x, {kSize}));
    const std::vector<float> computed = w.to_vector<float>();
    for (int i = 0; i < kSize; ++i) {
      weights[i] = weights[i] - rate * ((weights[i] * x[i] - 1) * x[i]);
      ASSERT_NEAR(computed[i], weights[i], 1e-5) << "step " << step << ", element " << i;
    }
  }
  const lz::Stats stats = lz::stats();
  EXPECT_EQ(stats.plan_misses, 1);
  EXPECT_EQ(stats.plan_hits, kSteps - 1);
}

/// The parameters after `steps` of Adam on sum((w * x - 1)^2), reading only the loss at each
/// step as the README's loop does; `hits_by_step` gets lz::stats().plan_hits after each.
std::vector<float> adam_steps(int steps, std::vector<int64_t>& hits_by_step) {
  std::vector<lz::Tensor> params = {lz::full({8}, 0.5f)};
  // Data, as a data loader's batches are (a generated input, left pending by the first step and
  // written by the second, would give the third step the first graph of its own).
  const lz::Tensor x = lz::from_vector<float>({0, 1, 2, 3, 4, 5, 6, 7}, {8}) / 8.0;
  x.wait_to_read();
  // Not 0.1: the first step's step size, 0.1 / (1 - 0.9), rounds to 1 in float32, a number the
  // passes fold, which gives that step a graph of its own.
  lz::optim::Adam adam({.learning_rate = 0.05});
  lz::reset_stats();
  for (int step = 0; step < steps; ++step) {
    auto [loss, grads] = lz::value_and_grad(
        [&](const std::vector<lz::Tensor>& p) { return lz::sum(lz::square(p[0] * x - 1.0)); },
        params);
    adam.step(params, grads);
    (void)loss.item<float>();
    hits_by_step.push_back(lz::stats().plan_hits);
  }
  return params[0].to_vector<float>();
}

// Each Adam step records new bias corrections: which of a step's numbers share a node must not
// depend on their values, or every step records another graph and runs the passes again. And
// the gradients the loop holds while it reads the loss would let the new state stay pending
// (cheap to recompute from them), every other step: the optimizer marks its state to be
// written whenever computed, and makes the initial parameters (generated here) and zero moments
// data before the first step. Each launch runs the backward pass and update of one step with the
// forward pass of the next, so the first launch is a forward pass alone: from the third step on,
// every step hits.
TEST(PlanCacheTest, AnAdamLoopReadingItsLossHitsFromItsThirdStep) {
  constexpr int kSteps = 16;
  std::vector<int64_t> hits;
  lz::set_plan_cache(false);
  const std::vector<float> expected = adam_steps(kSteps, hits);
  lz::set_plan_cache(true);
  hits.clear();
  EXPECT_EQ(adam_steps(kSteps, hits), expected) << "the hits computed other values";
  for (int step = 2; step < kSteps; ++step) {
    EXPECT_EQ(hits[step], hits[step - 1] + 1) << "step " << step + 1 << " ran the passes";
  }
}

TEST(PlanCacheTest, TurnedOffEveryEvaluationRunsThePasses) {
  lz::set_plan_cache(false);
  lz::waitall();
  lz::reset_stats();
  const lz::Tensor x = lz::arange(0, 8);
  for (int step = 0; step < 3; ++step) {
    EXPECT_EQ(lz::sum(x * static_cast<double>(step + 2)).item<float>(), 28.0f * (step + 2));
  }
  EXPECT_EQ(lz::stats().plan_hits, 0);
  EXPECT_EQ(lz::stats().plan_misses, 0);
  lz::set_plan_cache(true);
}
