// What training needs beyond gradients: logsumexp, one_hot and cross_entropy, initializers, the
// MLP helpers and the optimizers, each against values computed here by plain loops.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <lazuli/lazuli.h>

namespace {

using lz::Shape;
using lz::Tensor;

TEST(TrainingOpsTest, LogsumexpDoesNotOverflow) {
  const Tensor x = lz::from_vector<double>({1000, 1000, -1, 2, 0.5, 3}, {2, 3});
  const std::vector<double> rows = lz::logsumexp(x, 1).to_vector<double>();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_NEAR(rows[0], 1000 + std::log(2 + std::exp(-1001.0)), 1e-12);
  EXPECT_NEAR(rows[1], std::log(std::exp(2.0) + std::exp(0.5) + std::exp(3.0)), 1e-12);
  const double all = lz::logsumexp(x).item<double>();
  EXPECT_NEAR(all, 1000 + std::log(2.0), 1e-12);
  EXPECT_EQ(lz::logsumexp(x, {0, 1}, true).shape(), (Shape{1, 1}));
  EXPECT_EQ(lz::logsumexp(x, -2, true).shape(), (Shape{1, 3}));
}

TEST(TrainingOpsTest, LogsumexpOfARowOfMinusInfinityIsMinusInfinity) {
  const double inf = std::numeric_limits<double>::infinity();
  const Tensor x = lz::from_vector<double>({-inf, -inf, 0, inf}, {2, 2});
  const std::vector<double> rows = lz::logsumexp(x, 1).to_vector<double>();
  EXPECT_EQ(rows[0], -inf);
  EXPECT_EQ(rows[1], inf);
}

TEST(TrainingOpsTest, OneHotMarksEachLabelAndNothingForOneOutOfRange) {
  const Tensor labels = lz::from_vector<int32_t>({2, 0, 3, -1}, {4});
  const Tensor encoded = lz::one_hot(labels, 3);
  EXPECT_EQ(encoded.shape(), (Shape{4, 3}));
  EXPECT_EQ(encoded.dtype(), lz::float32);
  EXPECT_EQ(encoded.to_vector<float>(), (std::vector<float>{0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0}));
  try {
    lz::one_hot(lz::ones({2}), 3);
    FAIL() << "expected an error";
  } catch (const lz::Error& error) {
    EXPECT_NE(std::string(error.what()).find("[one_hot] at "), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("must be int32 or int64, got float32"),
              std::string::npos)
        << error.what();
  }
}

/// -log softmax(row)[label], averaged, by plain loops.
double cross_entropy_by_hand(const std::vector<double>& logits, const std::vector<int64_t>& labels,
                             int64_t classes) {
  double total = 0;
  for (size_t row = 0; row < labels.size(); ++row) {
    double sum = 0;
    for (int64_t c = 0; c < classes; ++c) sum += std::exp(logits[row * classes + c]);
    total += std::log(sum) - logits[row * classes + labels[row]];
  }
  return total / static_cast<double>(labels.size());
}

TEST(TrainingOpsTest, CrossEntropyAndItsGradientSoftmaxMinusOneHot) {
  const std::vector<double> values{0.5, -1, 2, 0, 3, 1, -2, 0.25, 0.75, 1, 1, 1};
  const std::vector<int64_t> labels{2, 0, 1, 2};
  const Tensor logits = lz::from_vector(values, {4, 3});
  const Tensor targets = lz::from_vector(labels, {4});
  const auto [loss, grads] = lz::value_and_grad(
      [&](const std::vector<Tensor>& p) { return lz::cross_entropy(p[0], targets); }, {logits});
  EXPECT_NEAR(loss.item<double>(), cross_entropy_by_hand(values, labels, 3), 1e-12);
  const std::vector<double> g = grads[0].to_vector<double>();
  for (size_t row = 0; row < 4; ++row) {
    double sum = 0;
    for (size_t c = 0; c < 3; ++c) sum += std::exp(values[row * 3 + c]);
    for (size_t c = 0; c < 3; ++c) {
      const double expected =
          (std::exp(values[row * 3 + c]) / sum - (static_cast<int64_t>(c) == labels[row])) / 4;
      EXPECT_NEAR(g[row * 3 + c], expected, 1e-12) << "row " << row << " class " << c;
    }
  }
}

TEST(TrainingOpsTest, ALabelOutsideTheClassesMakesTheLossNaN) {
  const std::vector<double> values{0.5, -1, 2, 0, 3, 1};
  const Tensor logits = lz::from_vector(values, {2, 3});
  for (int64_t wrong : {3, -1, 100}) {
    const Tensor labels = lz::from_vector<int64_t>({1, wrong}, {2});
    EXPECT_TRUE(std::isnan(lz::cross_entropy(logits, labels).item<double>())) << wrong;
  }
  // The largest and smallest valid labels still give the loss by hand.
  EXPECT_NEAR(lz::cross_entropy(logits, lz::from_vector<int64_t>({0, 2}, {2})).item<double>(),
              cross_entropy_by_hand(values, {0, 2}, 3), 1e-12);
}

TEST(TrainingOpsTest, CrossEntropyRejectsMismatchedLabels) {
  const Tensor logits = lz::zeros({4, 3});
  EXPECT_THROW(lz::cross_entropy(logits, lz::zeros({4}, lz::int64).astype(lz::float32)), lz::Error);
  EXPECT_THROW(lz::cross_entropy(logits, lz::zeros({3}, lz::int64)), lz::Error);
  EXPECT_THROW(lz::cross_entropy(lz::zeros({4, 3}, lz::int32), lz::zeros({4}, lz::int64)),
               lz::Error);
}

/// Mean and standard deviation of `values`.
std::pair<double, double> moments(const std::vector<float>& values) {
  double sum = 0;
  double squares = 0;
  for (float v : values) {
    sum += v;
    squares += double{v} * v;
  }
  const double mean = sum / static_cast<double>(values.size());
  return {mean, std::sqrt(squares / static_cast<double>(values.size()) - mean * mean)};
}

TEST(InitializerTest, ScalesFollowTheFans) {
  // A (200, 100) weight: fan_in 200, fan_out 100; 20,000 draws give the moments to about 1%.
  const Shape shape{200, 100};
  struct Expected {
    Tensor values;
    double deviation;
    double bound;  // 0 for normal draws
  };
  const Expected cases[] = {
      {lz::nn::glorot_uniform(shape, 1), std::sqrt(6.0 / 300) / std::sqrt(3.0),
       std::sqrt(6.0 / 300)},
      {lz::nn::glorot_normal(shape, 2), std::sqrt(2.0 / 300), 0},
      {lz::nn::he_uniform(shape, 3), std::sqrt(6.0 / 200) / std::sqrt(3.0), std::sqrt(6.0 / 200)},
      {lz::nn::he_normal(shape, 4), std::sqrt(2.0 / 200), 0},
  };
  for (const Expected& c : cases) {
    const std::vector<float> values = c.values.to_vector<float>();
    const auto [mean, deviation] = moments(values);
    EXPECT_NEAR(mean, 0, 0.03 * c.deviation);
    EXPECT_NEAR(deviation, c.deviation, 0.03 * c.deviation);
    if (c.bound > 0) {
      for (float v : values) ASSERT_LE(std::abs(v), c.bound);
    }
  }
  EXPECT_EQ(lz::nn::he_normal(shape, 4).to_vector<float>(), cases[3].values.to_vector<float>());
  EXPECT_THROW(lz::nn::he_normal(shape, 4, lz::int32), lz::Error);
  EXPECT_THROW(lz::nn::glorot_uniform({0, 3}, 4), lz::Error);
}

TEST(MlpTest, ComputesReluLayersAndLogits) {
  const std::vector<Tensor> params = lz::nn::mlp_parameters({3, 4, 2}, 7, lz::float64);
  ASSERT_EQ(params.size(), 4u);
  EXPECT_EQ(params[0].shape(), (Shape{3, 4}));
  EXPECT_EQ(params[1].to_vector<double>(), (std::vector<double>{0, 0, 0, 0}));
  EXPECT_EQ(params[2].shape(), (Shape{4, 2}));
  const std::vector<double> x{0.5, -1, 2, 1, 1, -0.5};
  const Tensor logits = lz::nn::mlp(params, lz::from_vector(x, {2, 3}));
  const std::vector<double> w1 = params[0].to_vector<double>();
  const std::vector<double> w2 = params[2].to_vector<double>();
  const std::vector<double> got = logits.to_vector<double>();
  for (int row = 0; row < 2; ++row) {
    double hidden[4];
    for (int j = 0; j < 4; ++j) {
      hidden[j] = 0;
      for (int k = 0; k < 3; ++k) hidden[j] += x[row * 3 + k] * w1[k * 4 + j];
      hidden[j] = std::max(hidden[j], 0.0);
    }
    for (int j = 0; j < 2; ++j) {
      double out = 0;
      for (int k = 0; k < 4; ++k) out += hidden[k] * w2[k * 2 + j];
      EXPECT_NEAR(got[row * 2 + j], out, 1e-12);
    }
  }
  EXPECT_THROW(lz::nn::mlp({params[0]}, lz::ones({2, 3})), lz::Error);
  EXPECT_THROW(lz::nn::linear(lz::ones({2, 3}), params[0], params[2]), lz::Error);
}

// Three steps of each optimizer on f(p) = sum(p^2 * c), against the same updates by hand.
const std::vector<double> kStart{1, -2, 0.5};
const std::vector<double> kScale{1, 0.5, 3};

std::vector<double> gradient_at(const std::vector<double>& p) {
  std::vector<double> g;
  for (size_t i = 0; i < p.size(); ++i) g.push_back(2 * p[i] * kScale[i]);
  return g;
}

template <class Optimizer>
std::vector<double> three_steps(Optimizer optimizer) {
  std::vector<Tensor> params{lz::from_vector(kStart, {3})};
  const Tensor scale = lz::from_vector(kScale, {3});
  for (int step = 0; step < 3; ++step) {
    const auto grads = lz::grad(
        [&](const std::vector<Tensor>& p) { return lz::sum(p[0] * p[0] * scale); }, params);
    optimizer.step(params, grads);
  }
  return params[0].to_vector<double>();
}

void expect_near(const std::vector<double>& got, const std::vector<double>& expected) {
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], expected[i], 1e-12) << i;
}

TEST(OptimizerTest, SgdWithMomentumWeightDecayAndNesterovMatchesTheUpdateRule) {
  for (bool nesterov : {false, true}) {
    const double lr = 0.1, momentum = 0.9, decay = 0.01;
    std::vector<double> p = kStart;
    std::vector<double> v(3);
    for (int step = 0; step < 3; ++step) {
      std::vector<double> g = gradient_at(p);
      for (size_t i = 0; i < 3; ++i) {
        g[i] += decay * p[i];
        v[i] = step == 0 ? g[i] : momentum * v[i] + g[i];
        p[i] -= lr * (nesterov ? g[i] + momentum * v[i] : v[i]);
      }
    }
    SCOPED_TRACE(nesterov ? "nesterov" : "momentum");
    expect_near(three_steps(lz::optim::SGD({lr, momentum, decay, nesterov})), p);
  }
  std::vector<double> plain = kStart;
  for (int step = 0; step < 3; ++step) {
    const std::vector<double> g = gradient_at(plain);
    for (size_t i = 0; i < 3; ++i) plain[i] -= 0.1 * g[i];
  }
  expect_near(three_steps(lz::optim::SGD({.learning_rate = 0.1})), plain);
}

TEST(OptimizerTest, AdamMatchesTheUpdateRule) {
  const double lr = 0.05, b1 = 0.9, b2 = 0.99, eps = 1e-8, decay = 0.1;
  std::vector<double> p = kStart;
  std::vector<double> m(3), v(3);
  for (int t = 1; t <= 3; ++t) {
    std::vector<double> g = gradient_at(p);
    for (size_t i = 0; i < 3; ++i) {
      g[i] += decay * p[i];
      m[i] = b1 * m[i] + (1 - b1) * g[i];
      v[i] = b2 * v[i] + (1 - b2) * g[i] * g[i];
      const double m_hat = m[i] / (1 - std::pow(b1, t));
      const double v_hat = v[i] / (1 - std::pow(b2, t));
      p[i] -= lr * m_hat / (std::sqrt(v_hat) + eps);
    }
  }
  expect_near(three_steps(lz::optim::Adam({lr, b1, b2, eps, decay})), p);
}

TEST(OptimizerTest, AnAdamStepIsOneKernelUpdatingTheParameterAndItsMoments) {
  std::vector<Tensor> params{lz::random_uniform({1000}, 1)};
  const Tensor grad = lz::random_uniform({1000}, 2);
  lz::optim::Adam adam({});
  adam.step(params, {grad});  // the first step also makes the moments
  lz::waitall();
  lz::reset_stats();
  adam.step(params, {grad});
  lz::waitall();
  EXPECT_EQ(lz::stats().kernels_launched, 1);
}

TEST(OptimizerTest, AStepThatFailsChangesNothing) {
  // The second gradient is on another device, so the step throws after recording the first
  // parameter's update; neither the parameters nor the optimizer's state may keep any of it.
  const lz::Device other = lz::Device::cpu(1);
  for (int adam = 0; adam < 2; ++adam) {
    SCOPED_TRACE(adam ? "Adam" : "SGD");
    lz::optim::SGD sgd({.learning_rate = 0.1, .momentum = 0.9});
    lz::optim::Adam optimizer({.learning_rate = 0.1});
    auto step = [&](std::vector<Tensor>& p, const std::vector<Tensor>& g) {
      adam ? optimizer.step(p, g) : sgd.step(p, g);
    };
    std::vector<Tensor> params{lz::ones({2}, lz::float64), lz::ones({3}, lz::float64)};
    const std::vector<Tensor> before = params;
    EXPECT_THROW(step(params, {lz::ones({2}, lz::float64), lz::ones({3}, lz::float64).to(other)}),
                 lz::Error);
    EXPECT_EQ(params[0].node(), before[0].node());
    EXPECT_EQ(params[1].node(), before[1].node());
    EXPECT_EQ(optimizer.steps(), 0);
    // The next step is the first: the same as a fresh optimizer's.
    step(params, {lz::ones({2}, lz::float64), lz::ones({3}, lz::float64)});
    // SGD's first step moves by lr * g (its velocity starts at g), Adam's by lr * sign(g).
    EXPECT_NEAR(params[1].to_vector<double>()[0], 0.9, 1e-7);
  }
}

TEST(OptimizerTest, StepsOfOtherParametersAreErrors) {
  std::vector<Tensor> params{lz::ones({3})};
  lz::optim::SGD sgd({.learning_rate = 0.1, .momentum = 0.9});
  EXPECT_THROW(sgd.step(params, {}), lz::Error);
  EXPECT_THROW(sgd.step(params, {lz::ones({2})}), lz::Error);
  sgd.step(params, {lz::ones({3})});
  std::vector<Tensor> more{lz::ones({3}), lz::ones({2})};
  EXPECT_THROW(sgd.step(more, {lz::ones({3}), lz::ones({2})}), lz::Error);
}

}  // namespace
