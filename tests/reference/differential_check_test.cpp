#include "reference/differential_check.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/node.h"
#include "memory/buffer.h"
#include "reference/counter_rng.h"

namespace lz::reference {
namespace {

/// A graph of data leaves without buffers, one per (dtype, shape).
ir::Graph leaves(const std::vector<std::pair<DType, Shape>>& types) {
  ir::Graph graph;
  for (const auto& [dtype, shape] : types) {
    auto node = std::make_shared<ir::Node>();
    node->op = ir::Op::Data;
    node->dtype = dtype;
    node->shape = shape;
    graph.nodes.push_back(node);
    graph.outputs.push_back(node);
  }
  return graph;
}

template <class T>
std::shared_ptr<memory::Buffer> buffer_of(DType dtype, const std::vector<T>& values) {
  auto buffer = memory::Buffer::allocate(dtype, static_cast<int64_t>(values.size()));
  for (size_t i = 0; i < values.size(); ++i) buffer->data_as<T>()[i] = values[i];
  return buffer;
}

const std::vector<std::pair<DType, Shape>> kEveryDType = {{DType::Float32, {4, 8}},
                                                          {DType::Float64, {16}},
                                                          {DType::Int32, {3, 5}},
                                                          {DType::Int64, {2, 2, 2}},
                                                          {DType::Bool, {64}}};

TEST(DifferentialCheckTest, SameSeedGivesSameValuesInRange) {
  const ir::Graph first = leaves(kEveryDType);
  const ir::Graph second = leaves(kEveryDType);
  reference::fill_data_leaves(first, 7);
  reference::fill_data_leaves(second, 7);
  for (size_t p = 0; p < first.nodes.size(); ++p) {
    const memory::Buffer& a = *first.nodes[p]->buffer;
    const memory::Buffer& b = *second.nodes[p]->buffer;
    ASSERT_EQ(a.size(), first.nodes[p]->size());
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.bytes()), 0) << "leaf %" << p;
  }
  const float* f32 = first.nodes[0]->buffer->data_as<float>();
  const double* f64 = first.nodes[1]->buffer->data_as<double>();
  const int32_t* i32 = first.nodes[2]->buffer->data_as<int32_t>();
  const int64_t* i64 = first.nodes[3]->buffer->data_as<int64_t>();
  const bool* b = first.nodes[4]->buffer->data_as<bool>();
  for (int i = 0; i < 32; ++i) EXPECT_TRUE(f32[i] >= -2.0f && f32[i] < 2.0f) << f32[i];
  for (int i = 0; i < 16; ++i) EXPECT_TRUE(f64[i] >= -2.0 && f64[i] < 2.0) << f64[i];
  for (int i = 0; i < 15; ++i) EXPECT_TRUE(i32[i] >= -5 && i32[i] < 5) << i32[i];
  for (int i = 0; i < 8; ++i) EXPECT_TRUE(i64[i] >= -5 && i64[i] < 5) << i64[i];
  int trues = 0;
  for (int i = 0; i < 64; ++i) trues += b[i] ? 1 : 0;
  EXPECT_GT(trues, 0);
  EXPECT_LT(trues, 64);
  // The documented rule: element i of the leaf at position p from
  // reference::random_bits(reference::random_bits(s, p), i).
  EXPECT_EQ(f64[3], reference::uniform_element(reference::random_bits(7, 1), 3, -2.0, 2.0));
  EXPECT_EQ(i32[5], static_cast<int32_t>(std::floor(
                        reference::uniform_element(reference::random_bits(7, 2), 5, -5, 5))));
}

TEST(DifferentialCheckTest, DifferentLeafPositionGivesDifferentValues) {
  const ir::Graph graph = leaves({{DType::Float32, {16}}, {DType::Float32, {16}}});
  reference::fill_data_leaves(graph, 3);
  const memory::Buffer& at0 = *graph.nodes[0]->buffer;
  const memory::Buffer& at1 = *graph.nodes[1]->buffer;
  EXPECT_NE(std::memcmp(at0.data(), at1.data(), at0.bytes()), 0);
}

TEST(DifferentialCheckTest, LeafWithBufferKeepsIt) {
  const ir::Graph graph = leaves({{DType::Int32, {2}}});
  const auto values = buffer_of<int32_t>(DType::Int32, {100, 200});
  graph.nodes[0]->buffer = values;
  reference::fill_data_leaves(graph, 1);
  EXPECT_EQ(graph.nodes[0]->buffer, values);
  EXPECT_EQ(values->data_as<int32_t>()[1], 200);
}

TEST(DifferentialCheckTest, Float32WithinToleranceAgreesJustOutsideDiffers) {
  // Tolerance at 1: atol 1e-6 + rtol 1e-5 * 1 = 1.1e-5.
  const auto reference = buffer_of<float>(DType::Float32, {0, 0, 0, 0, 1, 0});
  const auto within = buffer_of<float>(DType::Float32, {0, 0, 0, 0, 1.00001f, 5e-7f});
  const auto outside = buffer_of<float>(DType::Float32, {0, 0, 0, 0, 1.000012f, 0});
  EXPECT_EQ(reference::compare_buffers(reference.get(), within.get(), {2, 3}), "");
  const std::string difference = reference::compare_buffers(reference.get(), outside.get(), {2, 3});
  EXPECT_EQ(difference.rfind("1 of 6 elements differ; first at [1,1]: reference 1, optimized", 0),
            0u)
      << difference;
  const auto outside_atol = buffer_of<float>(DType::Float32, {0, 0, 0, 0, 1, 2e-6f});
  EXPECT_NE(reference::compare_buffers(reference.get(), outside_atol.get(), {2, 3}), "");
}

TEST(DifferentialCheckTest, Float64ToleranceIsTighter) {
  const auto reference = buffer_of<double>(DType::Float64, {1.0});
  const auto within = buffer_of<double>(DType::Float64, {1.0 + 1.5e-12});
  const auto outside = buffer_of<double>(DType::Float64, {1.0 + 3e-12});
  EXPECT_EQ(reference::compare_buffers(reference.get(), within.get(), {1}), "");
  EXPECT_NE(reference::compare_buffers(reference.get(), outside.get(), {1}), "");
}

// exp(x) in float32 then astype(float64): a one-ulp difference of the float32 exp is a float32
// rounding difference in the float64 result, which float64's tolerance would call wrong.
TEST(DifferentialCheckTest, Float64ComputedFromFloat32HasFloat32Tolerance) {
  const auto reference = buffer_of<double>(DType::Float64, {1.0});
  const auto one_float_ulp = buffer_of<double>(DType::Float64, {1.0 + 1.2e-7});
  EXPECT_NE(reference::compare_buffers(reference.get(), one_float_ulp.get(), {1}), "");
  EXPECT_EQ(reference::compare_buffers(reference.get(), one_float_ulp.get(), {1},
                                       reference::Precision::Float32),
            "");

  ir::Graph graph = leaves({{DType::Float32, {2}}, {DType::Float64, {2}}});
  const auto op = [](ir::Op kind, DType dtype, ir::NodePtr input) {
    auto node = std::make_shared<ir::Node>();
    node->op = kind;
    node->dtype = dtype;
    node->shape = input->shape;
    node->inputs = {std::move(input)};
    return node;
  };
  const ir::NodePtr widened =
      op(ir::Op::Astype, DType::Float64, op(ir::Op::Exp, DType::Float32, graph.nodes[0]));
  const ir::NodePtr pure = op(ir::Op::Exp, DType::Float64, graph.nodes[1]);
  EXPECT_EQ(reference::precision_of(*widened), reference::Precision::Float32);
  EXPECT_EQ(reference::precision_of(*op(ir::Op::Exp, DType::Float64, widened)),
            reference::Precision::Float32);
  EXPECT_EQ(reference::precision_of(*pure), reference::Precision::OfDtype);
}

TEST(DifferentialCheckTest, IntegerOffByOneDiffers) {
  const auto reference = buffer_of<int32_t>(DType::Int32, {1, 2, 3});
  const auto same = buffer_of<int32_t>(DType::Int32, {1, 2, 3});
  const auto off_by_one = buffer_of<int32_t>(DType::Int32, {1, 2, 4});
  EXPECT_EQ(reference::compare_buffers(reference.get(), same.get(), {3}), "");
  EXPECT_EQ(reference::compare_buffers(reference.get(), off_by_one.get(), {3}),
            "1 of 3 elements differ; first at [2]: reference 3, optimized 4");
}

TEST(DifferentialCheckTest, NanMatchesNanButNotANumber) {
  constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
  const auto nan = buffer_of<float>(DType::Float32, {kNan});
  const auto other_nan = buffer_of<float>(DType::Float32, {-kNan});
  const auto number = buffer_of<float>(DType::Float32, {1.0f});
  EXPECT_EQ(reference::compare_buffers(nan.get(), other_nan.get(), {1}), "");
  EXPECT_NE(reference::compare_buffers(nan.get(), number.get(), {1}), "");
  EXPECT_NE(reference::compare_buffers(number.get(), nan.get(), {1}), "");
}

TEST(DifferentialCheckTest, MissingOrMismatchedBufferDiffers) {
  const auto floats = buffer_of<float>(DType::Float32, {1.0f, 2.0f});
  const auto ints = buffer_of<int32_t>(DType::Int32, {1, 2});
  EXPECT_EQ(reference::compare_buffers(nullptr, floats.get(), {2}),
            "the reference produced no buffer");
  EXPECT_EQ(reference::compare_buffers(floats.get(), nullptr, {2}),
            "the optimized run produced no buffer");
  EXPECT_EQ(reference::compare_buffers(floats.get(), ints.get(), {2}),
            "the optimized buffer holds 2 int32 elements, the reference 2 float32");
}

}  // namespace
}  // namespace lz::reference
