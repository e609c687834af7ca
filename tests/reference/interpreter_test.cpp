#include "reference/interpreter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <numeric>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/graph.h"
#include "ir/node.h"
#include "ir/type_inference.h"
#include "lazuli/error.h"
#include "memory/buffer.h"
#include "reference/counter_rng.h"

namespace lz::reference {
namespace {

using ir::Node;
using ir::NodePtr;
using ir::Op;

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr double kNan64 = std::numeric_limits<double>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr int32_t kInt32Min = std::numeric_limits<int32_t>::min();
constexpr int32_t kInt32Max = std::numeric_limits<int32_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

/// A `data` leaf holding `values` (row-major) with the given shape.
template <class T>
NodePtr data(Shape shape, const std::vector<T>& values) {
  auto node = std::make_shared<Node>();
  node->op = Op::Data;
  node->dtype = dtype_of<T>();
  node->shape = std::move(shape);
  EXPECT_EQ(static_cast<int64_t>(values.size()), node->size()) << "test data has the wrong size";
  node->buffer = memory::Buffer::allocate(node->dtype, node->size());
  for (size_t i = 0; i < values.size(); ++i) node->buffer->data_as<T>()[i] = values[i];
  return node;
}

/// 0, 1, 2, ... as a data leaf of `shape`.
template <class T>
NodePtr iota(Shape shape) {
  std::vector<T> values(shape_size(shape));
  std::iota(values.begin(), values.end(), T{0});
  return data<T>(std::move(shape), values);
}

/// A node of `op` over `inputs`. `configure` sets attributes (and, for ops whose shape or dtype is
/// an attribute, those); the rest of the type comes from the IR's typing rules.
NodePtr make(Op op, std::vector<NodePtr> inputs, const std::function<void(Node&)>& configure = {}) {
  auto node = std::make_shared<Node>();
  node->op = op;
  if (!inputs.empty()) node->dtype = inputs[0]->dtype;
  node->inputs = std::move(inputs);
  if (configure) configure(*node);
  const ir::TensorType type = ir::infer_type(*node);
  node->dtype = type.dtype;
  node->shape = type.shape;
  return node;
}

NodePtr reduce(Op op, NodePtr x, std::vector<int64_t> axes, bool keepdims = false) {
  return make(op, {std::move(x)}, [&](Node& n) {
    n.set_attributes().axes = axes;
    n.keepdims = keepdims;
  });
}

NodePtr astype(NodePtr x, DType dtype) {
  return make(Op::Astype, {std::move(x)}, [&](Node& n) { n.dtype = dtype; });
}

/// Interprets the graph behind `node` and returns its elements.
template <class T>
std::vector<T> run(const NodePtr& node) {
  const ir::Graph graph = ir::Graph::collect(std::span(&node, 1));
  std::vector<bool> keep(graph.nodes.size(), false);
  keep.back() = true;  // the post-order walk puts the output last
  const std::vector<std::shared_ptr<memory::Buffer>> results = reference::interpret(graph, keep);
  const memory::Buffer& result = *results.back();
  EXPECT_EQ(result.dtype(), dtype_of<T>());
  EXPECT_EQ(result.size(), node->size());
  return std::vector<T>(result.data_as<T>(), result.data_as<T>() + result.size());
}

// ---------------------------------------------------------------------------------------------
// Leaves

TEST(InterpreterTest, FullUsesTheParameterOfTheDtype) {
  const NodePtr ints = make(Op::Full, {}, [](Node& n) {
    n.dtype = int32;
    n.shape = {2, 2};
    n.params[0] = ir::ScalarParam::of_integer(-7);
  });
  EXPECT_EQ(run<int32_t>(ints), (std::vector<int32_t>{-7, -7, -7, -7}));
  const NodePtr floats = make(Op::Full, {}, [](Node& n) {
    n.dtype = float64;
    n.shape = {3};
    n.params[0] = ir::ScalarParam::of(2.5);
  });
  EXPECT_EQ(run<double>(floats), (std::vector<double>{2.5, 2.5, 2.5}));
  const NodePtr bools = make(Op::Full, {}, [](Node& n) {
    n.dtype = bool_;
    n.shape = {};
    n.params[0] = ir::ScalarParam::of_integer(1);  // 0 or 1: other values do not fit bool
  });
  EXPECT_EQ(run<bool>(bools), (std::vector<bool>{true}));
}

TEST(InterpreterTest, ArangeComputesStartPlusIndexTimesStep) {
  const NodePtr floats = make(Op::Arange, {}, [](Node& n) {
    n.dtype = float32;
    n.shape = {4};
    n.params[0] = ir::ScalarParam::of(0.5);
    n.params[1] = ir::ScalarParam::of(-0.25);
  });
  EXPECT_EQ(run<float>(floats), (std::vector<float>{0.5f, 0.25f, 0.0f, -0.25f}));
  const NodePtr ints = make(Op::Arange, {}, [](Node& n) {
    n.dtype = int64;
    n.shape = {3};
    n.params[0] = ir::ScalarParam::of_integer(kInt64Max - 1);
    n.params[1] = ir::ScalarParam::of_integer(1);
  });
  EXPECT_EQ(run<int64_t>(ints), (std::vector<int64_t>{kInt64Max - 1, kInt64Max, kInt64Min}));
}

TEST(InterpreterTest, RandomUniformIsTheCounterBasedDefinitionConvertedToTheDtype) {
  const NodePtr floats = make(Op::RandomUniform, {}, [](Node& n) {
    n.dtype = float64;
    n.shape = {100};
    n.seed = 42;
    n.params[0] = ir::ScalarParam::of(-2.0);
    n.params[1] = ir::ScalarParam::of(3.0);
  });
  const std::vector<double> values = run<double>(floats);
  for (uint64_t i = 0; i < values.size(); ++i) {
    EXPECT_EQ(values[i], reference::uniform_element(42, i, -2.0, 3.0)) << "element " << i;
    EXPECT_GE(values[i], -2.0);
    EXPECT_LT(values[i], 3.0);
  }
  const NodePtr ints = make(Op::RandomUniform, {}, [](Node& n) {
    n.dtype = int32;
    n.shape = {100};
    n.seed = 7;
    n.params[0] = ir::ScalarParam::of(-5.0);
    n.params[1] = ir::ScalarParam::of(5.0);
  });
  const std::vector<int32_t> int_values = run<int32_t>(ints);
  for (uint64_t i = 0; i < int_values.size(); ++i) {
    EXPECT_EQ(int_values[i],
              static_cast<int32_t>(std::floor(reference::uniform_element(7, i, -5.0, 5.0))))
        << "element " << i;
  }
}

TEST(InterpreterTest, RandomNormalIsTheCounterBasedDefinitionRoundedToFloat32) {
  const NodePtr node = make(Op::RandomNormal, {}, [](Node& n) {
    n.dtype = float32;
    n.shape = {2, 5};
    n.seed = 3;
    n.params[0] = ir::ScalarParam::of(1.0);
    n.params[1] = ir::ScalarParam::of(0.5);
  });
  const std::vector<float> values = run<float>(node);
  for (uint64_t i = 0; i < values.size(); ++i) {
    EXPECT_EQ(values[i], static_cast<float>(reference::normal_element(3, i, 1.0, 0.5)))
        << "element " << i;
  }
}

TEST(InterpreterTest, DataNodeWithoutBufferIsAnError) {
  auto node = std::make_shared<Node>();
  node->shape = {2};
  try {
    run<float>(make(Op::Exp, {node}));
    FAIL() << "expected lz::Error";
  } catch (const Error& error) {
    EXPECT_EQ(std::string(error.what()).rfind("[data] node has no buffer", 0), 0u) << error.what();
  }
}

// ---------------------------------------------------------------------------------------------
// Unary and astype

TEST(InterpreterTest, UnaryFloatMathMatchesItsDefinitions) {
  const NodePtr x = data<double>({3}, {0.0, 4.0, -1.0});
  EXPECT_EQ(run<double>(make(Op::Sigmoid, {x}))[0], 0.5);
  EXPECT_EQ(run<double>(make(Op::Rsqrt, {x}))[1], 0.5);
  EXPECT_EQ(run<double>(make(Op::Exp, {x}))[2], std::exp(-1.0));
  EXPECT_TRUE(std::isnan(run<double>(make(Op::Log, {x}))[2]));
  EXPECT_EQ(run<double>(make(Op::Square, {x})), (std::vector<double>{0.0, 16.0, 1.0}));
  EXPECT_EQ(run<double>(make(Op::Abs, {x})), (std::vector<double>{0.0, 4.0, 1.0}));
}

TEST(InterpreterTest, Float32UnaryMathIsRoundedFromDouble) {
  const NodePtr x = data<float>({2}, {0.1f, 2.0f});
  const std::vector<float> result = run<float>(make(Op::Tanh, {x}));
  EXPECT_EQ(result[0], static_cast<float>(std::tanh(static_cast<double>(0.1f))));
  EXPECT_EQ(result[1], static_cast<float>(std::tanh(2.0)));
}

TEST(InterpreterTest, ReluKeepsNanAndZeroesNegatives) {
  const std::vector<float> result =
      run<float>(make(Op::Relu, {data<float>({4}, {-1.5f, kNan, 0.0f, 2.0f})}));
  EXPECT_EQ(result[0], 0.0f);
  EXPECT_TRUE(std::isnan(result[1]));
  EXPECT_EQ(result[2], 0.0f);
  EXPECT_EQ(result[3], 2.0f);
  EXPECT_EQ(run<int32_t>(make(Op::Relu, {data<int32_t>({2}, {-3, 3})})),
            (std::vector<int32_t>{0, 3}));
}

TEST(InterpreterTest, Int32UnaryOpsWrapAround) {
  const NodePtr x = data<int32_t>({3}, {kInt32Min, -5, 65536});
  EXPECT_EQ(run<int32_t>(make(Op::Neg, {x})), (std::vector<int32_t>{kInt32Min, 5, -65536}));
  EXPECT_EQ(run<int32_t>(make(Op::Abs, {x})), (std::vector<int32_t>{kInt32Min, 5, 65536}));
  // 65536^2 = 2^32 wraps to 0; (-2^31)^2 = 2^62 wraps to 0 as well.
  EXPECT_EQ(run<int32_t>(make(Op::Square, {x})), (std::vector<int32_t>{0, 25, 0}));
}

TEST(InterpreterTest, AstypeFloatToIntSaturatesTruncatesAndMapsNanToZero) {
  const NodePtr x = data<float>({7}, {kNan, 3e9f, -3e9f, -2.7f, 2.7f, kInf, -kInf});
  EXPECT_EQ(run<int32_t>(astype(x, int32)),
            (std::vector<int32_t>{0, kInt32Max, kInt32Min, -2, 2, kInt32Max, kInt32Min}));
  const NodePtr big = data<double>({3}, {1e19, -1e19, -9223372036854775808.0});
  EXPECT_EQ(run<int64_t>(astype(big, int64)),
            (std::vector<int64_t>{kInt64Max, kInt64Min, kInt64Min}));
}

TEST(InterpreterTest, AstypeToBoolIsNonZeroAndNanIsTrue) {
  const NodePtr x = data<float>({4}, {0.0f, -0.0f, kNan, 0.25f});
  EXPECT_EQ(run<bool>(astype(x, bool_)), (std::vector<bool>{false, false, true, true}));
  const NodePtr ints = data<int64_t>({2}, {0, -4});
  EXPECT_EQ(run<bool>(astype(ints, bool_)), (std::vector<bool>{false, true}));
}

TEST(InterpreterTest, AstypeBetweenIntegersWrapsAndBoolBecomesZeroOrOne) {
  const NodePtr x = data<int64_t>({3}, {(int64_t{1} << 32) + 5, int64_t{1} << 31, -1});
  EXPECT_EQ(run<int32_t>(astype(x, int32)), (std::vector<int32_t>{5, kInt32Min, -1}));
  const NodePtr flags = data<bool>({2}, {true, false});
  EXPECT_EQ(run<double>(astype(flags, float64)), (std::vector<double>{1.0, 0.0}));
  EXPECT_EQ(run<int32_t>(astype(flags, int32)), (std::vector<int32_t>{1, 0}));
}

TEST(InterpreterTest, AstypeFloat64ToFloat32RoundsToNearest) {
  // Just above the midpoint between 1 and the next float32 (1 + 2^-23): truncation would give 1.
  const NodePtr x = data<double>({1}, {1.0 + 0x1p-24 + 0x1p-30});
  EXPECT_EQ(run<float>(astype(x, float32))[0], 1.0f + 0x1p-23f);
}

// ---------------------------------------------------------------------------------------------
// Binary and where

TEST(InterpreterTest, AddBroadcastsColumnAgainstRow) {
  const NodePtr column = data<float>({3, 1}, {0, 10, 20});
  const NodePtr row = data<float>({1, 4}, {1, 2, 3, 4});
  const NodePtr sum = make(Op::Add, {column, row});
  EXPECT_EQ(sum->shape, (Shape{3, 4}));
  EXPECT_EQ(run<float>(sum), (std::vector<float>{1, 2, 3, 4, 11, 12, 13, 14, 21, 22, 23, 24}));
}

TEST(InterpreterTest, BinaryBroadcastsMissingLeadingDimensionsAndScalars) {
  const NodePtr matrix = iota<int32_t>({2, 3});
  const NodePtr row = data<int32_t>({3}, {10, 20, 30});
  EXPECT_EQ(run<int32_t>(make(Op::Mul, {matrix, row})),
            (std::vector<int32_t>{0, 20, 60, 30, 80, 150}));
  const NodePtr scalar = data<int32_t>({}, {100});
  EXPECT_EQ(run<int32_t>(make(Op::Sub, {scalar, matrix})),
            (std::vector<int32_t>{100, 99, 98, 97, 96, 95}));
}

TEST(InterpreterTest, Int32ArithmeticWrapsAround) {
  const NodePtr a = data<int32_t>({3}, {kInt32Max, kInt32Min, 65536});
  const NodePtr b = data<int32_t>({3}, {1, 1, 65536});
  EXPECT_EQ(run<int32_t>(make(Op::Add, {a, b})),
            (std::vector<int32_t>{kInt32Min, kInt32Min + 1, 131072}));
  EXPECT_EQ(run<int32_t>(make(Op::Sub, {a, b})),
            (std::vector<int32_t>{kInt32Max - 1, kInt32Max, 0}));
  EXPECT_EQ(run<int32_t>(make(Op::Mul, {a, b})), (std::vector<int32_t>{kInt32Max, kInt32Min, 0}));
}

TEST(InterpreterTest, IntegerPowWrapsAndTruncatesNegativeExponents) {
  const NodePtr base = data<int32_t>({8}, {2, 3, -1, -1, 1, 2, 0, 2});
  const NodePtr exponent = data<int32_t>({8}, {10, 2, -3, -2, -5, -1, 0, 31});
  EXPECT_EQ(run<int32_t>(make(Op::Pow, {base, exponent})),
            (std::vector<int32_t>{1024, 9, -1, 1, 1, 0, 1, kInt32Min}));
  const NodePtr big = data<int64_t>({2}, {2, 3});
  const NodePtr power = data<int64_t>({2}, {64, 3});
  EXPECT_EQ(run<int64_t>(make(Op::Pow, {big, power})), (std::vector<int64_t>{0, 27}));
}

TEST(InterpreterTest, Float32DivisionIsCorrectlyRounded) {
  const NodePtr a = data<float>({2}, {1.0f, 2.0f});
  const NodePtr b = data<float>({2}, {3.0f, 0.0f});
  const std::vector<float> result = run<float>(make(Op::Div, {a, b}));
  EXPECT_EQ(result[0], 1.0f / 3.0f);
  EXPECT_EQ(result[1], kInf);
}

TEST(InterpreterTest, MaximumAndMinimumPropagateNan) {
  const NodePtr a = data<float>({3}, {1.0f, kNan, 3.0f});
  const NodePtr b = data<float>({3}, {2.0f, 2.0f, kNan});
  const std::vector<float> maximum = run<float>(make(Op::Maximum, {a, b}));
  EXPECT_EQ(maximum[0], 2.0f);
  EXPECT_TRUE(std::isnan(maximum[1]));
  EXPECT_TRUE(std::isnan(maximum[2]));
  const std::vector<float> minimum = run<float>(make(Op::Minimum, {a, b}));
  EXPECT_EQ(minimum[0], 1.0f);
  EXPECT_TRUE(std::isnan(minimum[1]));
  EXPECT_TRUE(std::isnan(minimum[2]));
}

TEST(InterpreterTest, BoolMaximumIsOrAndMinimumIsAnd) {
  const NodePtr a = data<bool>({4}, {false, false, true, true});
  const NodePtr b = data<bool>({4}, {false, true, false, true});
  EXPECT_EQ(run<bool>(make(Op::Maximum, {a, b})), (std::vector<bool>{false, true, true, true}));
  EXPECT_EQ(run<bool>(make(Op::Minimum, {a, b})), (std::vector<bool>{false, false, false, true}));
}

TEST(InterpreterTest, ComparisonsWithNanAreFalseExceptNotEqual) {
  const NodePtr a = data<double>({3}, {1.0, kNan64, 2.0});
  const NodePtr b = data<double>({3}, {1.0, kNan64, 1.0});
  EXPECT_EQ(run<bool>(make(Op::Equal, {a, b})), (std::vector<bool>{true, false, false}));
  EXPECT_EQ(run<bool>(make(Op::NotEqual, {a, b})), (std::vector<bool>{false, true, true}));
  EXPECT_EQ(run<bool>(make(Op::Less, {a, b})), (std::vector<bool>{false, false, false}));
  EXPECT_EQ(run<bool>(make(Op::LessEqual, {a, b})), (std::vector<bool>{true, false, false}));
  EXPECT_EQ(run<bool>(make(Op::Greater, {a, b})), (std::vector<bool>{false, false, true}));
  EXPECT_EQ(run<bool>(make(Op::GreaterEqual, {a, b})), (std::vector<bool>{true, false, true}));
}

TEST(InterpreterTest, ComparisonsOfBroadcastIntegersGiveBool) {
  const NodePtr column = data<int64_t>({2, 1}, {1, 3});
  const NodePtr row = data<int64_t>({3}, {0, 2, 4});
  EXPECT_EQ(run<bool>(make(Op::Less, {column, row})),
            (std::vector<bool>{false, true, true, false, false, true}));
}

TEST(InterpreterTest, WhereBroadcastsConditionAndBothValues) {
  const NodePtr cond = data<bool>({3, 1}, {true, false, true});
  const NodePtr a = data<int64_t>({1, 2}, {1, 2});
  const NodePtr b = data<int64_t>({}, {0});
  const NodePtr result = make(Op::Where, {cond, a, b});
  EXPECT_EQ(result->shape, (Shape{3, 2}));
  EXPECT_EQ(run<int64_t>(result), (std::vector<int64_t>{1, 2, 0, 0, 1, 2}));
}

// ---------------------------------------------------------------------------------------------
// Reductions

TEST(InterpreterTest, SumOverAxesZeroAndTwoOfArange) {
  // Element (i, j, k) of the 2x3x4 arange is 12i + 4j + k; summing over i in {0,1} and k in
  // {0..3} gives 8 * 4j + 4 * 12 + 2 * 6 = 32j + 60.
  const NodePtr x = iota<int64_t>({2, 3, 4});
  const NodePtr sum = reduce(Op::Sum, x, {0, 2});
  EXPECT_EQ(sum->shape, (Shape{3}));
  EXPECT_EQ(run<int64_t>(sum), (std::vector<int64_t>{60, 92, 124}));
  const NodePtr kept = reduce(Op::Sum, iota<float>({2, 3, 4}), {0, 2}, /*keepdims=*/true);
  EXPECT_EQ(kept->shape, (Shape{1, 3, 1}));
  EXPECT_EQ(run<float>(kept), (std::vector<float>{60, 92, 124}));
}

TEST(InterpreterTest, SumOverAllAxesGivesAScalar) {
  const NodePtr sum = reduce(Op::Sum, iota<int32_t>({2, 3}), {0, 1});
  EXPECT_EQ(sum->shape, (Shape{}));
  EXPECT_EQ(run<int32_t>(sum), (std::vector<int32_t>{15}));
}

TEST(InterpreterTest, Float32SumAccumulatesInDouble) {
  // In float32, 1e8 + 1 rounds back to 1e8 and the sum would be 0.
  const NodePtr x = data<float>({3}, {1e8f, 1.0f, -1e8f});
  EXPECT_EQ(run<float>(reduce(Op::Sum, x, {0})), (std::vector<float>{1.0f}));
}

TEST(InterpreterTest, Int32SumWrapsAround) {
  const NodePtr x = data<int32_t>({3}, {kInt32Max, 1, 1});
  EXPECT_EQ(run<int32_t>(reduce(Op::Sum, x, {0})), (std::vector<int32_t>{kInt32Min + 1}));
}

TEST(InterpreterTest, SumOfZeroElementsIsZero) {
  const NodePtr x = data<double>({0, 3}, {});
  EXPECT_EQ(run<double>(reduce(Op::Sum, x, {0})), (std::vector<double>{0, 0, 0}));
}

TEST(InterpreterTest, MaxAndMinReduceTheGivenAxis) {
  const NodePtr x = data<int32_t>({2, 3}, {4, -1, 7, 0, 9, -8});
  EXPECT_EQ(run<int32_t>(reduce(Op::Max, x, {1})), (std::vector<int32_t>{7, 9}));
  EXPECT_EQ(run<int32_t>(reduce(Op::Min, x, {0})), (std::vector<int32_t>{0, -1, -8}));
}

TEST(InterpreterTest, MaxAndMinPropagateNan) {
  const NodePtr x = data<float>({2, 3}, {1.0f, kNan, 5.0f, -kInf, 2.0f, kInf});
  const std::vector<float> maximum = run<float>(reduce(Op::Max, x, {1}));
  EXPECT_TRUE(std::isnan(maximum[0]));
  EXPECT_EQ(maximum[1], kInf);
  const std::vector<float> minimum = run<float>(reduce(Op::Min, x, {1}));
  EXPECT_TRUE(std::isnan(minimum[0]));
  EXPECT_EQ(minimum[1], -kInf);
}

TEST(InterpreterTest, BoolMaxIsAnyAndMinIsAll) {
  const NodePtr x = data<bool>({3, 2}, {false, false, true, false, true, true});
  EXPECT_EQ(run<bool>(reduce(Op::Max, x, {1})), (std::vector<bool>{false, true, true}));
  EXPECT_EQ(run<bool>(reduce(Op::Min, x, {1})), (std::vector<bool>{false, false, true}));
}

TEST(InterpreterTest, ArgmaxReturnsTheFirstOfTiedMaxima) {
  const NodePtr x = data<int32_t>({2, 3}, {1, 3, 3, 5, 5, 2});
  EXPECT_EQ(run<int64_t>(reduce(Op::Argmax, x, {1})), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(run<int64_t>(reduce(Op::Argmax, x, {0})), (std::vector<int64_t>{1, 1, 0}));
  const NodePtr kept = reduce(Op::Argmax, x, {0}, /*keepdims=*/true);
  EXPECT_EQ(kept->shape, (Shape{1, 3}));
}

TEST(InterpreterTest, ArgmaxTreatsTheFirstNanAsTheMaximum) {
  const NodePtr x = data<float>({2, 4}, {1.0f, kNan, 5.0f, kNan, -kInf, -kInf, -kInf, -kInf});
  EXPECT_EQ(run<int64_t>(reduce(Op::Argmax, x, {1})), (std::vector<int64_t>{1, 0}));
}

TEST(InterpreterTest, ArgmaxOfBoolIsTheFirstTrue) {
  const NodePtr x = data<bool>({2, 3}, {false, true, true, false, false, false});
  EXPECT_EQ(run<int64_t>(reduce(Op::Argmax, x, {1})), (std::vector<int64_t>{1, 0}));
}

TEST(InterpreterTest, ArgminReturnsTheFirstOfTiedMinimaAndTheFirstNan) {
  const NodePtr ints = data<int32_t>({2, 3}, {4, 1, 1, 2, 2, 7});
  EXPECT_EQ(run<int64_t>(reduce(Op::Argmin, ints, {1})), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(run<int64_t>(reduce(Op::Argmin, ints, {0})), (std::vector<int64_t>{1, 0, 0}));
  // As numpy: a NaN counts as the minimum; +inf everywhere gives the first position.
  const NodePtr floats = data<float>({2, 4}, {3.0f, kNan, -5.0f, kNan, kInf, kInf, kInf, kInf});
  EXPECT_EQ(run<int64_t>(reduce(Op::Argmin, floats, {1})), (std::vector<int64_t>{1, 0}));
  const NodePtr bools = data<bool>({2, 3}, {true, false, false, true, true, true});
  EXPECT_EQ(run<int64_t>(reduce(Op::Argmin, bools, {1})), (std::vector<int64_t>{1, 0}));
}

// ---------------------------------------------------------------------------------------------
// Movement

TEST(InterpreterTest, ReshapeKeepsRowMajorOrder) {
  const NodePtr x = iota<int64_t>({2, 3});
  const NodePtr reshaped = make(Op::Reshape, {x}, [](Node& n) { n.shape = {3, 1, 2}; });
  EXPECT_EQ(run<int64_t>(reshaped), (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));
}

TEST(InterpreterTest, TransposeOfTwoByThreeSwapsAxes) {
  const NodePtr transposed = make(Op::Transpose, {iota<float>({2, 3})}, [](Node& n) {
    n.set_attributes().axes = {1, 0};
  });
  EXPECT_EQ(transposed->shape, (Shape{3, 2}));
  EXPECT_EQ(run<float>(transposed), (std::vector<float>{0, 3, 1, 4, 2, 5}));
}

TEST(InterpreterTest, TransposeDimensionDReadsInputDimensionPermD) {
  // Input (2,3,4) holds 12i + 4j + k at (i,j,k); with perm {2,0,1} output (k,i,j) reads it.
  const NodePtr transposed = make(Op::Transpose, {iota<int32_t>({2, 3, 4})}, [](Node& n) {
    n.set_attributes().axes = {2, 0, 1};
  });
  EXPECT_EQ(transposed->shape, (Shape{4, 2, 3}));
  std::vector<int32_t> expected;
  for (int k = 0; k < 4; ++k) {
    for (int i = 0; i < 2; ++i) {
      for (int j = 0; j < 3; ++j) expected.push_back(12 * i + 4 * j + k);
    }
  }
  EXPECT_EQ(run<int32_t>(transposed), expected);
}

TEST(InterpreterTest, BroadcastToRepeatsAlongNewAndUnitAxes) {
  const NodePtr x = data<bool>({2, 1}, {true, false});
  const NodePtr broadcast = make(Op::BroadcastTo, {x}, [](Node& n) { n.shape = {2, 2, 3}; });
  EXPECT_EQ(run<bool>(broadcast), (std::vector<bool>{true, true, true, false, false, false, true,
                                                     true, true, false, false, false}));
}

TEST(InterpreterTest, SliceWithNegativeStepReversesAxis) {
  const NodePtr x = iota<int32_t>({2, 4});
  const NodePtr reversed = make(Op::Slice, {x}, [](Node& n) {
    n.set_attributes().starts = {0, 3};
    n.set_attributes().steps = {1, -1};
    n.shape = {2, 4};
  });
  EXPECT_EQ(run<int32_t>(reversed), (std::vector<int32_t>{3, 2, 1, 0, 7, 6, 5, 4}));
  const NodePtr strided = make(Op::Slice, {x}, [](Node& n) {
    n.set_attributes().starts = {1, 3};
    n.set_attributes().steps = {-1, -2};
    n.shape = {2, 2};
  });
  EXPECT_EQ(run<int32_t>(strided), (std::vector<int32_t>{7, 5, 3, 1}));
}

TEST(InterpreterTest, SliceWithOffsetAndStepSelectsEveryOtherElement) {
  const NodePtr x = iota<double>({7});
  const NodePtr sliced = make(Op::Slice, {x}, [](Node& n) {
    n.set_attributes().starts = {1};
    n.set_attributes().steps = {2};
    n.shape = {3};
  });
  EXPECT_EQ(run<double>(sliced), (std::vector<double>{1, 3, 5}));
}

TEST(InterpreterTest, ConcatenateOnAxisOneJoinsRows) {
  const NodePtr a = data<int64_t>({2, 2}, {1, 2, 3, 4});
  const NodePtr b = data<int64_t>({2, 3}, {5, 6, 7, 8, 9, 10});
  const NodePtr joined =
      make(Op::Concatenate, {a, b}, [](Node& n) { n.set_attributes().axes = {1}; });
  EXPECT_EQ(joined->shape, (Shape{2, 5}));
  EXPECT_EQ(run<int64_t>(joined), (std::vector<int64_t>{1, 2, 5, 6, 7, 3, 4, 8, 9, 10}));
}

TEST(InterpreterTest, ConcatenateOnAxisZeroAppendsAndSkipsEmptyInputs) {
  const NodePtr a = data<float>({1, 2}, {1, 2});
  const NodePtr empty = data<float>({0, 2}, {});
  const NodePtr b = data<float>({2, 2}, {3, 4, 5, 6});
  const NodePtr joined =
      make(Op::Concatenate, {a, empty, b}, [](Node& n) { n.set_attributes().axes = {0}; });
  EXPECT_EQ(run<float>(joined), (std::vector<float>{1, 2, 3, 4, 5, 6}));
}

// ---------------------------------------------------------------------------------------------
// MatMul

TEST(InterpreterTest, MatMulOfTwoByThreeAndThreeByTwo) {
  const NodePtr a = data<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  const NodePtr b = data<float>({3, 2}, {7, 8, 9, 10, 11, 12});
  const NodePtr product = make(Op::MatMul, {a, b});
  EXPECT_EQ(product->shape, (Shape{2, 2}));
  EXPECT_EQ(run<float>(product), (std::vector<float>{58, 64, 139, 154}));
}

TEST(InterpreterTest, MatMulBroadcastsBatchDimensions) {
  // a: (2,1,2,2) holding 1*I and 2*I; b: (3,2,2) holding B0, B1, B2. Output (2,3,2,2) has
  // block (i, j) = (i + 1) * Bj.
  const NodePtr a = data<int32_t>({2, 1, 2, 2}, {1, 0, 0, 1, 2, 0, 0, 2});
  const NodePtr b = data<int32_t>({3, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  const NodePtr product = make(Op::MatMul, {a, b});
  EXPECT_EQ(product->shape, (Shape{2, 3, 2, 2}));
  EXPECT_EQ(run<int32_t>(product),
            (std::vector<int32_t>{1, 2, 3, 4, 5,  6,  7,  8,  9,  10, 11, 12,  //
                                  2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24}));
}

TEST(InterpreterTest, Float32MatMulAccumulatesInDouble) {
  // [1e8, 1, -1e8] . [1, 1, 1]: float32 accumulation would lose the 1.
  const NodePtr a = data<float>({1, 3}, {1e8f, 1.0f, -1e8f});
  const NodePtr b = data<float>({3, 1}, {1.0f, 1.0f, 1.0f});
  EXPECT_EQ(run<float>(make(Op::MatMul, {a, b})), (std::vector<float>{1.0f}));
}

TEST(InterpreterTest, Int64MatMulWrapsAround) {
  const NodePtr a = data<int64_t>({1, 2}, {kInt64Max, 1});
  const NodePtr b = data<int64_t>({2, 1}, {2, 3});
  // 2 * (2^63 - 1) wraps to -2; -2 + 3 = 1.
  EXPECT_EQ(run<int64_t>(make(Op::MatMul, {a, b})), (std::vector<int64_t>{1}));
}

TEST(InterpreterTest, MatMulWithEmptyContractionGivesZeros) {
  const NodePtr a = data<double>({2, 0}, {});
  const NodePtr b = data<double>({0, 3}, {});
  EXPECT_EQ(run<double>(make(Op::MatMul, {a, b})), (std::vector<double>(6, 0.0)));
}

// ---------------------------------------------------------------------------------------------
// Empty and 0-d tensors

TEST(InterpreterTest, SizeZeroDimensionsGiveEmptyResults) {
  const NodePtr empty = data<float>({0, 3}, {});
  EXPECT_TRUE(run<float>(make(Op::Add, {empty, data<float>({1, 3}, {1, 2, 3})})).empty());
  EXPECT_TRUE(run<float>(make(Op::Exp, {empty})).empty());
  EXPECT_TRUE(run<float>(make(Op::Transpose, {empty}, [](Node& n) {
                n.set_attributes().axes = {1, 0};
              })).empty());
  EXPECT_TRUE(run<float>(reduce(Op::Max, empty, {1})).empty());
  EXPECT_TRUE(run<int64_t>(reduce(Op::Argmax, empty, {1})).empty());
  EXPECT_TRUE(
      run<float>(make(Op::MatMul, {empty, data<float>({3, 2}, {1, 2, 3, 4, 5, 6})})).empty());
  EXPECT_TRUE(run<float>(make(Op::Slice, {iota<float>({4})}, [](Node& n) {
                n.set_attributes().starts = {0};
                n.set_attributes().steps = {1};
                n.shape = {0};
              })).empty());
  EXPECT_TRUE(run<int32_t>(make(Op::Full, {}, [](Node& n) {
                n.dtype = int32;
                n.shape = {5, 0};
              })).empty());
}

TEST(InterpreterTest, ZeroDimensionalTensorsHaveOneElement) {
  const NodePtr scalar = data<double>({}, {2.0});
  const NodePtr product = make(Op::Mul, {scalar, data<double>({}, {3.5})});
  EXPECT_EQ(product->shape, (Shape{}));
  EXPECT_EQ(run<double>(product), (std::vector<double>{7.0}));
  EXPECT_EQ(run<double>(make(Op::Add, {scalar, iota<double>({2, 2})})),
            (std::vector<double>{2, 3, 4, 5}));
  EXPECT_EQ(run<double>(reduce(Op::Sum, scalar, {})), (std::vector<double>{2.0}));
  EXPECT_EQ(run<double>(make(Op::Reshape, {scalar},
                             [](Node& n) {
                               n.shape = {1, 1};
                             })),
            (std::vector<double>{2.0}));
}

// ---------------------------------------------------------------------------------------------
// Whole graphs

TEST(InterpreterTest, InterpretFreesResultsThatAreNotKept) {
  // x -> e = exp(x) -> n = neg(e) -> out = add(n, x); keep e and out.
  const NodePtr x = data<double>({2}, {0.0, 1.0});
  const NodePtr e = make(Op::Exp, {x});
  const NodePtr n = make(Op::Neg, {e});
  const NodePtr out = make(Op::Add, {n, x});
  const ir::Graph graph = ir::Graph::collect(std::span(&out, 1));
  const ir::NodePositions position = graph.index();
  std::vector<bool> keep(graph.nodes.size(), false);
  keep[position.at(e.get())] = true;
  keep[position.at(out.get())] = true;

  const std::vector<std::shared_ptr<memory::Buffer>> results = reference::interpret(graph, keep);
  ASSERT_EQ(results.size(), 4u);
  EXPECT_EQ(results[position.at(x.get())], nullptr);
  EXPECT_EQ(results[position.at(n.get())], nullptr);
  const std::shared_ptr<memory::Buffer>& kept_exp = results[position.at(e.get())];
  const std::shared_ptr<memory::Buffer>& kept_out = results[position.at(out.get())];
  ASSERT_NE(kept_exp, nullptr);
  ASSERT_NE(kept_out, nullptr);
  EXPECT_EQ(kept_exp->data_as<double>()[1], std::exp(1.0));
  EXPECT_EQ(kept_out->data_as<double>()[0], -1.0);
  EXPECT_EQ(kept_out->data_as<double>()[1], 1.0 - std::exp(1.0));
  EXPECT_NE(x->buffer, nullptr) << "freeing a result must not touch the data leaf's own buffer";
}

TEST(InterpreterTest, InterpretFreesAResultWithoutConsumersUnlessKept) {
  const NodePtr x = data<float>({1}, {0.0f});
  const NodePtr unused = make(Op::Exp, {x});
  const NodePtr kept = make(Op::Neg, {x});
  const NodePtr outputs[] = {unused, kept};
  const ir::Graph graph = ir::Graph::collect(outputs);
  const ir::NodePositions position = graph.index();
  std::vector<bool> keep(graph.nodes.size(), false);
  keep[position.at(kept.get())] = true;

  const std::vector<std::shared_ptr<memory::Buffer>> results = reference::interpret(graph, keep);
  EXPECT_EQ(results[position.at(unused.get())], nullptr);
  ASSERT_NE(results[position.at(kept.get())], nullptr);
  EXPECT_EQ(results[position.at(kept.get())]->data_as<float>()[0], -0.0f);
}

TEST(InterpreterTest, InterpretUsesEvaluatedNodesAsTheyAre) {
  // `evaluated` is an exp node that already holds a buffer: its input must not be read.
  const NodePtr never_read = std::make_shared<Node>();
  never_read->shape = {2};
  const NodePtr evaluated = make(Op::Exp, {never_read});
  evaluated->buffer = data<float>({2}, {5.0f, 6.0f})->buffer;
  const NodePtr out = make(Op::Add, {evaluated, evaluated});
  ir::Graph graph;
  graph.nodes = {evaluated, out};
  graph.outputs = {out};
  const std::vector<std::shared_ptr<memory::Buffer>> results =
      reference::interpret(graph, {false, true});
  EXPECT_EQ(results[0], nullptr);
  ASSERT_NE(results[1], nullptr);
  const memory::Buffer& result = *results[1];
  EXPECT_EQ(result.data_as<float>()[0], 10.0f);
  EXPECT_EQ(result.data_as<float>()[1], 12.0f);
}

TEST(InterpreterTest, InterpretNodeRejectsABufferOfTheWrongSize) {
  const NodePtr x = data<float>({3}, {1, 2, 3});
  const NodePtr e = make(Op::Exp, {x});
  const std::shared_ptr<memory::Buffer> short_buffer = memory::Buffer::allocate(float32, 2);
  const memory::Buffer* inputs[] = {short_buffer.get()};
  EXPECT_THROW(reference::interpret_node(*e, inputs), Error);
}

}  // namespace
}  // namespace lz::reference
