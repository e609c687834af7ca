// lz::grad, value_and_grad and vjp: every op's rule against central finite differences in
// float64, known gradients by hand, differentiating twice, and the "[grad]" errors.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <lazuli/lazuli.h>

#include "gradient_check.h"
#include "ir/op.h"

namespace {

using lz::Shape;
using lz::Tensor;
using lz::testing::Argument;
using lz::testing::random_argument;

struct Case {
  std::string name;
  lz::ScalarFunction f;
  std::vector<Argument> arguments;
};

/// A loss that weighs each element differently, so that a rule that moves, drops or swaps
/// elements gets a wrong gradient: sum(y * w) with w = 1, 2, 3, ... (scaled down).
Tensor weighted_sum(const Tensor& y) {
  const int64_t n = y.size();
  const Tensor weights =
      lz::reshape(lz::arange(1, static_cast<double>(n) + 1, 1, lz::float64), y.shape());
  return lz::sum(y.astype(lz::float64) * weights / static_cast<double>(n));
}

std::vector<Case> unary_cases() {
  const Shape shape{2, 3};
  const Argument any = random_argument(shape, 1);
  const Argument positive = random_argument(shape, 2, 0.2, 3);
  using Unary = Tensor (*)(const Tensor&, std::source_location);
  auto unary = [](Unary op) {
    return [op](const std::vector<Tensor>& p) { return weighted_sum(op(p[0], {})); };
  };
  // Every public unary function of the op table, at positive arguments where its fuzz domain
  // asks for x >= 1 (log, sqrt, rsqrt), else at any.
  std::vector<Case> cases = {
#define LZ_UNARY_FUNCTION_OP(Enum, name, dtypes, cost, gradient, numpy, fuzz) \
  {#name,                                                                     \
   unary(lz::name),                                                           \
   {lz::ir::FuzzDomain::fuzz == lz::ir::FuzzDomain::FloatingAtLeastOne ? positive : any}},
#include "lazuli/op_table.def"
  };
  cases.push_back({"neg", [](const std::vector<Tensor>& p) { return weighted_sum(-p[0]); }, {any}});
  return cases;
}

std::vector<Case> binary_cases() {
  const Argument a = random_argument({2, 3}, 3);
  const Argument row = random_argument({3}, 4);
  const Argument column = random_argument({2, 1}, 5);
  const Argument positive = random_argument({2, 3}, 6, 0.3, 2);
  const Argument exponent = random_argument({3}, 7, -1.5, 2.5);
  auto binary = [](auto op) {
    return [op](const std::vector<Tensor>& p) { return weighted_sum(op(p[0], p[1])); };
  };
  return {
      {"add broadcasting a row", binary([](auto x, auto y) { return x + y; }), {a, row}},
      {"sub broadcasting a column", binary([](auto x, auto y) { return x - y; }), {column, a}},
      {"mul row by column", binary([](auto x, auto y) { return x * y; }), {row, column}},
      {"div", binary([](auto x, auto y) { return x / y; }), {a, positive}},
      {"div by a column", binary([](auto x, auto y) { return x / (y * y + 1); }), {a, column}},
      {"pow of tensors",
       binary([](auto x, auto y) { return lz::pow(x, y); }),
       {positive, exponent}},
      {"pow by a number",
       [](const std::vector<Tensor>& p) { return weighted_sum(lz::pow(p[0], 3)); },
       {a}},
      {"number to a power",
       [](const std::vector<Tensor>& p) { return weighted_sum(lz::pow(2.0, p[0])); },
       {a}},
      {"maximum", binary([](auto x, auto y) { return lz::maximum(x, y); }), {a, row}},
      {"minimum", binary([](auto x, auto y) { return lz::minimum(x, y); }), {column, a}},
      {"where",
       [](const std::vector<Tensor>& p) {
         return weighted_sum(lz::where(p[0] > 0, p[0] * 3, p[1]));
       },
       {a, row}},
      {"numbers on either side",
       [](const std::vector<Tensor>& p) {
         return weighted_sum((2 - p[0]) * 3 / (p[0] * p[0] + 1));
       },
       {a}},
      {"an input used twice",
       [](const std::vector<Tensor>& p) { return weighted_sum(p[0] * p[0] + lz::sin(p[0])); },
       {a}},
  };
}

std::vector<Case> reduction_cases() {
  const Argument x = random_argument({2, 3, 4}, 8);
  auto reduced = [](auto op) {
    return [op](const std::vector<Tensor>& p) { return weighted_sum(op(p[0])); };
  };
  return {
      {"sum of everything", [](const std::vector<Tensor>& p) { return lz::sum(p[0] * p[0]); }, {x}},
      {"sum over a negative axis", reduced([](auto t) { return lz::sum(t, -1); }), {x}},
      {"sum keeping dims",
       reduced([](auto t) {
         return lz::sum(t, {0, 2}, true);
       }),
       {x}},
      {"mean", reduced([](auto t) { return lz::mean(t, 1); }), {x}},
      {"max over an axis", reduced([](auto t) { return lz::max(t, 1); }), {x}},
      {"min keeping dims",
       reduced([](auto t) {
         return lz::min(t, {0, -1}, true);
       }),
       {x}},
      {"max of everything", reduced([](auto t) { return lz::max(t); }), {x}},
      {"softmax", reduced([](auto t) { return lz::softmax(t, 1); }), {x}},
      {"log_softmax", reduced([](auto t) { return lz::log_softmax(t); }), {x}},
      {"logsumexp",
       reduced([](auto t) {
         return lz::logsumexp(t, {0, 2});
       }),
       {x}},
      {"cross_entropy",
       [](const std::vector<Tensor>& p) {
         const Tensor labels = lz::from_vector<int64_t>({3, 0, 1, 1, 2, 0}, {2, 3});
         return lz::cross_entropy(p[0], labels);
       },
       {x}},
  };
}

std::vector<Case> movement_cases() {
  const Argument x = random_argument({3, 4}, 9);
  const Argument y = random_argument({2, 4}, 10);
  auto moved = [](auto op) {
    return [op](const std::vector<Tensor>& p) { return weighted_sum(op(p[0])); };
  };
  return {
      {"reshape",
       moved([](auto t) {
         return lz::reshape(t, {2, 6});
       }),
       {x}},
      {"transpose", moved([](auto t) { return lz::transpose(t); }), {x}},
      {"transpose of three axes",
       moved([](auto t) {
         return lz::transpose(lz::reshape(t, {3, 2, 2}), {1, 2, 0});
       }),
       {x}},
      {"broadcast_to",
       moved([](auto t) {
         return lz::broadcast_to(t, {2, 3, 4});
       }),
       {x}},
      {"slice",
       moved([](auto t) {
         return lz::slice(t, {1, 1}, {3, 3});
       }),
       {x}},
      {"strided slice",
       moved([](auto t) {
         return lz::slice(t, {0, 1}, {3, 4}, {2, 2});
       }),
       {x}},
      {"reversing slice", moved([](auto t) { return lz::slice(t, {-1}, {-4}, {-1}); }), {x}},
      {"negative strided slice",
       moved([](auto t) {
         return lz::slice(t, {2, 3}, {-4, -5}, {-2, -3});
       }),
       {x}},
      {"concatenate",
       [](const std::vector<Tensor>& p) {
         return weighted_sum(lz::concatenate({p[0], p[1] * 2, p[0]}, 0));
       },
       {x, y}},
      {"take_along_axis with repeated and negative indices",
       moved([](auto t) {
         const Tensor indices = lz::from_vector<int64_t>({1, 1, -1, 0, -4, 2}, {3, 2});
         return lz::take_along_axis(t, indices, 1);
       }),
       {x}},
      {"take_along_axis broadcasting x",
       moved([](auto t) {
         const Tensor indices = lz::from_vector<int32_t>({0, 2, 2, 1, 0, 0}, {2, 3, 1});
         return lz::take_along_axis(lz::reshape(t, {1, 3, 4}), indices, 1);
       }),
       {x}},
      {"take of rows, some twice",
       moved([](auto t) {
         return lz::take(t, lz::from_vector<int32_t>({2, 0, 2, -3}, {2, 2}), 0);
       }),
       {x}},
      {"take of one column",
       moved([](auto t) { return lz::take(t, lz::from_vector<int64_t>({3}, {}), 1); }),
       {x}},
      {"take of the flattened elements",
       moved([](auto t) {
         return lz::take(t, lz::from_vector<int64_t>({11, 0, 5, 5}, {4}));
       }),
       {x}},
      {"expand_dims and squeeze",
       moved([](auto t) { return lz::squeeze(lz::expand_dims(t, 1) * 2, {1}); }),
       {x}},
  };
}

std::vector<Case> matmul_cases() {
  const Argument a = random_argument({3, 4}, 11);
  const Argument b = random_argument({4, 2}, 12);
  const Argument batch = random_argument({2, 3, 4}, 13);
  const Argument vector = random_argument({4}, 14);
  auto product = [](const std::vector<Tensor>& p) { return weighted_sum(lz::matmul(p[0], p[1])); };
  return {
      {"matmul", product, {a, b}},
      {"batched matmul broadcasting the right operand", product, {batch, b}},
      {"matrix times vector", product, {a, vector}},
      {"vector times matrix", product, {vector, b}},
      {"matmul of a transpose",
       [](const std::vector<Tensor>& p) {
         return weighted_sum(lz::matmul(lz::transpose(p[0]), p[0]));
       },
       {a}},
  };
}

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (auto group : {unary_cases, binary_cases, reduction_cases, movement_cases, matmul_cases}) {
    for (Case& c : group()) cases.push_back(std::move(c));
  }
  return cases;
}

TEST(AutodiffTest, EveryRuleAgreesWithFiniteDifferences) {
  for (const Case& c : all_cases()) {
    SCOPED_TRACE(c.name);
    lz::testing::expect_gradient_matches_finite_differences(c.f, c.arguments);
  }
}

// A new op with a gradient rule gets a case above, or names the test that checks its rule.
TEST(AutodiffTest, EveryOpWithAGradientRuleHasAFiniteDifferenceCase) {
  const std::map<std::string, std::string> checked_elsewhere = {
      // Finite differences through a float32 round trip are too coarse to check it.
      {"astype", "AutodiffTest.AstypeGivesTheGradientInTheInputsDtype"},
      // Collectives need the ranks of an mpirun.
      {"all_sum", "CollectivesTest.GradientsFlowBackThroughCollectives"},
      {"all_max", "CollectivesTest.GradientsFlowBackThroughCollectives"},
      {"all_min", "CollectivesTest.GradientsFlowBackThroughCollectives"},
      {"all_gather", "CollectivesTest.GradientsFlowBackThroughCollectives"},
      {"reduce_scatter", "CollectivesTest.GradientsFlowBackThroughCollectives"},
      {"broadcast", "CollectivesTest.GradientsFlowBackThroughCollectives"},
  };
  std::set<std::string> recorded;
  for (const Case& c : all_cases()) {
    const std::string text = lz::ir_text({c.f(lz::testing::tensors_of(c.arguments))});
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
      const size_t equals = line.find(" = ");
      const size_t open = line.find('(', equals);
      if (equals != std::string::npos && open != std::string::npos) {
        recorded.insert(line.substr(equals + 3, open - equals - 3));
      }
    }
  }
  for (int i = 0; i < lz::ir::kOpCount; ++i) {
    const lz::ir::OpInfo& op = lz::ir::op_info(static_cast<lz::ir::Op>(i));
    if (op.gradient != lz::ir::Gradient::Rule) continue;
    const std::string name(op.name);
    EXPECT_TRUE(recorded.contains(name) || checked_elsewhere.contains(name))
        << name << " has a gradient rule that no case of EveryRuleAgreesWithFiniteDifferences "
        << "records";
  }
}

TEST(AutodiffTest, GradientOfSumOfSquaresIsTwiceTheInput) {
  const Tensor x = lz::from_vector<float>({1, -2, 3.5}, {3});
  const std::vector<Tensor> g =
      lz::grad([](const std::vector<Tensor>& p) { return lz::sum(p[0] * p[0]); }, {x});
  EXPECT_EQ(g[0].dtype(), lz::float32);
  EXPECT_EQ(g[0].to_vector<float>(), (std::vector<float>{2, -4, 7}));
}

TEST(AutodiffTest, TakingAGradientComputesNothing) {
  const Tensor x = lz::random_uniform({4, 5}, 1, -1, 1, lz::float64);
  x.wait_to_read();
  lz::reset_stats();
  const auto [value, grads] = lz::value_and_grad(
      [](const std::vector<Tensor>& p) { return lz::sum(lz::tanh(p[0]) * p[0]); }, {x});
  EXPECT_EQ(lz::stats().evaluations, 0);
  const std::vector<double> xs = x.to_vector<double>();
  const std::vector<double> gs = grads[0].to_vector<double>();
  double expected_value = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const double t = std::tanh(xs[i]);
    expected_value += t * xs[i];
    EXPECT_NEAR(gs[i], t + xs[i] * (1 - t * t), 1e-12);
  }
  EXPECT_NEAR(value.item<double>(), expected_value, 1e-12);
}

TEST(AutodiffTest, AstypeGivesTheGradientInTheInputsDtype) {
  // Finite differences cannot see through float32's rounding, so this one is checked by hand:
  // d/dx sum(3 exp(x as float64)) = 3 exp(x), rounded to float32.
  const Tensor x = lz::from_vector<float>({-1, 0.25f, 2}, {3});
  const auto g = lz::grad(
      [](const std::vector<Tensor>& p) { return lz::sum(lz::exp(p[0].astype(lz::float64)) * 3); },
      {x})[0];
  ASSERT_EQ(g.dtype(), lz::float32);
  const std::vector<float> gs = g.to_vector<float>();
  const std::vector<float> xs = x.to_vector<float>();
  for (size_t i = 0; i < xs.size(); ++i) EXPECT_FLOAT_EQ(gs[i], 3 * std::exp(double{xs[i]}));
}

TEST(AutodiffTest, StopGradientPassesTheValueButNoGradient) {
  const Tensor x = lz::from_vector<double>({1, -2, 3}, {3});
  const auto [value, grads] = lz::value_and_grad(
      [](const std::vector<Tensor>& p) { return lz::sum(lz::stop_gradient(p[0]) * p[0]); }, {x});
  EXPECT_EQ(value.item<double>(), 14);                                       // sum(x * x)
  EXPECT_EQ(grads[0].to_vector<double>(), (std::vector<double>{1, -2, 3}));  // x, not 2x
}

TEST(AutodiffTest, MaxSharesTheCotangentAmongTies) {
  const Tensor x = lz::from_vector<double>({1, 3, 3, 2, 5, 5, 5, 0}, {2, 4});
  const auto g =
      lz::grad([](const std::vector<Tensor>& p) { return lz::sum(lz::max(p[0], 1)); }, {x})[0];
  EXPECT_EQ(g.to_vector<double>(),
            (std::vector<double>{0, 0.5, 0.5, 0, 1. / 3, 1. / 3, 1. / 3, 0}));
  const auto m = lz::grad(
      [](const std::vector<Tensor>& p) { return lz::sum(lz::maximum(p[0], 3.0)); }, {x})[0];
  EXPECT_EQ(m.to_vector<double>(), (std::vector<double>{0, 0.5, 0.5, 0, 1, 1, 1, 0}));
}

TEST(AutodiffTest, AGatheredElementGetsTheCotangentOfEveryReadOfIt) {
  const Tensor x = lz::from_vector<double>({1, 2, 3}, {3});
  const Tensor indices = lz::from_vector<int64_t>({0, 5, 0, -1}, {4});
  const Tensor read = lz::take(x, indices, 0);
  const Tensor cotangent = lz::from_vector<double>({1, 10, 100, 1000}, {4});
  const auto g = lz::vjp({read}, {x}, {cotangent});
  // Index 5 is outside: it reads NaN and gives x nothing.
  EXPECT_EQ(g[0].to_vector<double>(), (std::vector<double>{101, 0, 1000}));
  const std::vector<double> values = read.to_vector<double>();
  EXPECT_EQ(values[0], 1);
  EXPECT_TRUE(std::isnan(values[1]));
  EXPECT_EQ(values[3], 3);
}

TEST(AutodiffTest, ReluAndAbsHaveZeroGradientAtZero) {
  const Tensor x = lz::from_vector<double>({-1, 0, 2}, {3});
  const auto relu =
      lz::grad([](const std::vector<Tensor>& p) { return lz::sum(lz::relu(p[0])); }, {x})[0];
  EXPECT_EQ(relu.to_vector<double>(), (std::vector<double>{0, 0, 1}));
  const auto abs =
      lz::grad([](const std::vector<Tensor>& p) { return lz::sum(lz::abs(p[0])); }, {x})[0];
  EXPECT_EQ(abs.to_vector<double>(), (std::vector<double>{-1, 0, 1}));
}

TEST(AutodiffTest, EmptyTensorsHaveEmptyGradients) {
  const Tensor x = lz::zeros({0, 3}, lz::float64);
  const auto g = lz::grad(
      [](const std::vector<Tensor>& p) { return lz::sum(lz::exp(p[0]) * 2) + 1.0; }, {x})[0];
  EXPECT_EQ(g.shape(), (Shape{0, 3}));
  EXPECT_TRUE(g.to_vector<double>().empty());
}

TEST(AutodiffTest, AnUnusedInputGetsZeros) {
  const Tensor x = lz::ones({2}, lz::float64);
  const Tensor unused = lz::ones({3, 1}, lz::float32);
  const auto g =
      lz::grad([](const std::vector<Tensor>& p) { return lz::sum(p[0] * 3); }, {x, unused});
  EXPECT_EQ(g[0].to_vector<double>(), (std::vector<double>{3, 3}));
  EXPECT_EQ(g[1].shape(), (Shape{3, 1}));
  EXPECT_EQ(g[1].dtype(), lz::float32);
  EXPECT_EQ(g[1].to_vector<float>(), (std::vector<float>{0, 0, 0}));
}

TEST(AutodiffTest, DifferentiatingTwiceGivesTheSecondDerivative) {
  // f(x) = sum(x^3): f' = 3x^2, and the derivative of sum(f') is 6x.
  const Tensor x = lz::from_vector<double>({-1, 0.5, 2}, {3});
  auto first = [](const std::vector<Tensor>& p) { return lz::sum(p[0] * p[0] * p[0]); };
  const auto second = lz::grad(
      [&](const std::vector<Tensor>& p) { return lz::sum(lz::grad(first, p)[0]); }, {x})[0];
  EXPECT_EQ(second.to_vector<double>(), (std::vector<double>{-6, 3, 12}));
}

TEST(AutodiffTest, AForwardPassComputedWhileRecordedStillHasItsGradient) {
  // A print (a blocking point) and the node budget both turn forward nodes into data while f
  // records; the tape keeps what they were computed from.
  const Tensor x = lz::from_vector<double>({0.5, -1, 2}, {3});
  struct RestoreBudget {
    ~RestoreBudget() { lz::set_max_pending_nodes(10'000); }  // the default
  } restore;
  lz::set_max_pending_nodes(3);
  const auto g = lz::grad(
      [](const std::vector<Tensor>& p) {
        Tensor h = lz::exp(p[0]);
        h.wait_to_read();
        for (int i = 0; i < 10; ++i) h = h * 1.5 + p[0];
        return lz::sum(h);
      },
      {x})[0];
  const std::vector<double> xs = x.to_vector<double>();
  std::vector<double> expected;
  for (double v : xs) {
    // h10 = 1.5^10 exp(x) + x (1.5^9 + ... + 1), so dh10/dx = 1.5^10 exp(x) + (1.5^10 - 1) / 0.5.
    expected.push_back(std::pow(1.5, 10) * std::exp(v) + (std::pow(1.5, 10) - 1) / 0.5);
  }
  const std::vector<double> gs = g.to_vector<double>();
  for (size_t i = 0; i < gs.size(); ++i) EXPECT_NEAR(gs[i], expected[i], 1e-9 * expected[i]);
}

TEST(AutodiffTest, ValuesRecordedBeforeGradAreConstantsComputedOrNot) {
  // h depends on w but was recorded before grad's f: a constant, whether still pending or
  // computed (the node budget or a print may compute it at any time).
  const Tensor w = lz::from_vector<double>({1, 2}, {2});
  auto f = [](const Tensor& h) {
    return [h](const std::vector<Tensor>& p) { return lz::sum(p[0] * h); };
  };
  const Tensor pending = w * 3;
  EXPECT_EQ(lz::grad(f(pending), {w})[0].to_vector<double>(), (std::vector<double>{3, 6}));
  const Tensor computed = w * 3;
  computed.wait_to_read();
  EXPECT_EQ(lz::grad(f(computed), {w})[0].to_vector<double>(), (std::vector<double>{3, 6}));
}

TEST(AutodiffTest, VjpOfPendingOutputsWeighsEachByItsCotangent) {
  const Tensor x = lz::from_vector<double>({1, 2, 3}, {3});
  const Tensor y = lz::from_vector<double>({4, 5}, {2});
  const Tensor outer = lz::expand_dims(x, 1) * y;  // outer[i][j] = x[i] y[j]
  const Tensor total = lz::sum(x);
  const Tensor w = lz::from_vector<double>({1, 0, 0, 2, 1, 1}, {3, 2});
  const auto g = lz::vjp({outer, total}, {x, y}, {w, lz::full({}, 10.0, lz::float64)});
  // d/dx_i = sum_j w_ij y_j + 10; d/dy_j = sum_i w_ij x_i.
  EXPECT_EQ(g[0].to_vector<double>(), (std::vector<double>{14, 20, 19}));
  EXPECT_EQ(g[1].to_vector<double>(), (std::vector<double>{4, 7}));
}

TEST(AutodiffTest, VjpOfAnOutputAlreadyComputedIsAnErrorNotZeros) {
  const Tensor x = lz::from_vector<double>({1, 2}, {2});
  const Tensor y = x * 3;
  EXPECT_EQ(y.to_vector<double>(), (std::vector<double>{3, 6}));  // computes y
  const Tensor ones = lz::ones({2}, lz::float64);
  try {
    lz::vjp({y}, {x}, {ones});
    ADD_FAILURE() << "expected lz::Error";
  } catch (const lz::Error& error) {
    const std::string message = error.what();
    EXPECT_EQ(message.rfind("[grad]", 0), 0u) << message;
    EXPECT_NE(message.find("output 0 (recorded at"), std::string::npos) << message;
    EXPECT_NE(message.find("already computed"), std::string::npos) << message;
    EXPECT_NE(message.find("call vjp before reading it"), std::string::npos) << message;
  }
  // Data the user made is no computed result: it does not depend on x, and its gradient is 0.
  const Tensor data = lz::from_vector<double>({5, 6}, {2});
  EXPECT_EQ(lz::vjp({data}, {x}, {ones})[0].to_vector<double>(), (std::vector<double>{0, 0}));
  // An input given as an output is its own gradient.
  EXPECT_EQ(lz::vjp({x}, {x}, {ones})[0].to_vector<double>(), (std::vector<double>{1, 1}));
}

TEST(AutodiffTest, ATwoLayerStepMatchesHandDerivedGradients) {
  // loss = sum(relu(x @ w1) @ w2) over a 2x3 batch, with gradients worked out by hand:
  // h = x @ w1 = [[1, -1], [4, 2]] (relu: [[1, 0], [4, 2]]), dloss/dh = w2^T masked by h > 0.
  const Tensor x = lz::from_vector<double>({1, 0, 1, 2, 1, 0}, {2, 3});
  const Tensor w1 = lz::from_vector<double>({1, 1, 2, 0, 0, -2}, {3, 2});
  const Tensor w2 = lz::from_vector<double>({3, -1}, {2, 1});
  const auto g = lz::grad(
      [](const std::vector<Tensor>& p) {
        return lz::sum(lz::matmul(lz::relu(lz::matmul(p[0], p[1])), p[2]));
      },
      {x, w1, w2});
  // dh = [[3, 0], [3, -1]]; dw1 = x^T dh; dw2 = relu(h)^T 1; dx = dh w1^T.
  EXPECT_EQ(g[1].to_vector<double>(), (std::vector<double>{9, -2, 3, -1, 3, 0}));
  EXPECT_EQ(g[2].to_vector<double>(), (std::vector<double>{5, 2}));
  EXPECT_EQ(g[0].to_vector<double>(), (std::vector<double>{3, 6, 0, 2, 6, 2}));
}

/// Expects `call` to throw an lz::Error about this file's line (the "[grad] at ..." of the call)
/// whose message contains each of `parts`.
void expect_grad_error(const std::function<void()>& call, const std::vector<std::string>& parts) {
  try {
    call();
    ADD_FAILURE() << "expected an error containing: " << parts.front();
  } catch (const lz::Error& error) {
    const std::string message = error.what();
    EXPECT_EQ(message.rfind("[grad] at ", 0), 0u) << message;
    EXPECT_NE(message.find("autodiff_test.cpp"), std::string::npos) << message;
    EXPECT_TRUE(error.location().has_value());
    for (const std::string& part : parts) {
      EXPECT_NE(message.find(part), std::string::npos) << message;
    }
  }
}

TEST(AutodiffTest, AskingForAGradientOfABoolOrIntegerIsAnError) {
  const Tensor x = lz::ones({2});
  expect_grad_error([&] { lz::vjp({x > 0}, {x}, {lz::ones({2}, lz::bool_)}); },
                    {"output 0 is bool, from [greater] recorded at"});
  const Tensor counts = lz::arange(0, 3, 1, lz::int32);
  expect_grad_error(
      [&] { lz::grad([](const std::vector<Tensor>& p) { return lz::sum(p[0] * 1.5); }, {counts}); },
      {"input 0 is int32, from [arange] recorded at"});
}

TEST(AutodiffTest, GradOfANonScalarResultIsAnErrorNamingItsShape) {
  const Tensor x = lz::ones({2, 3});
  expect_grad_error(
      [&] { lz::grad([](const std::vector<Tensor>& p) { return lz::exp(p[0]); }, {x}); },
      {"returned shape (2,3) from [exp] recorded at"});
}

TEST(AutodiffTest, ACotangentOfTheWrongShapeIsAnError) {
  const Tensor x = lz::ones({2, 3});
  expect_grad_error(
      [&] {
        lz::vjp({x * 2}, {x}, {lz::ones({3, 2})});
      },
      {"cotangent 0 has shape (3,2) but its output has shape (2,3)"});
  expect_grad_error([&] { lz::vjp({x * 2}, {x}, {}); }, {"got 1 outputs and 0 cotangents"});
}

}  // namespace

namespace {

TEST(AutodiffKernelCountTest, BackwardOfChain7IsAtMostTwoKernels) {
  const int64_t n = 1 << 16;
  const Tensor a = lz::random_uniform({n}, 1);
  const Tensor b = lz::random_uniform({n}, 2);
  const Tensor c = lz::random_uniform({n}, 3);
  const Tensor cotangent = lz::random_uniform({n}, 4);
  lz::eval_async({a, b, c, cotangent});
  lz::waitall();
  const Tensor y = ((a * b + c) * a - b) * 0.5 + c * c;
  lz::reset_stats();
  const auto g = lz::vjp({y}, {a, b, c}, {cotangent});
  lz::eval_async(g);
  for (const Tensor& t : g) t.wait_to_read();
  EXPECT_LE(lz::stats().kernels_launched, 2);
}

}  // namespace
