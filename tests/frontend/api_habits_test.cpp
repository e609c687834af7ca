// Habits numpy and PyTorch users bring: one int axis, method forms, compound assignment. Each
// is checked against values computed by hand, and against the function form it stands for.
#include <gtest/gtest.h>

#include <lazuli/lazuli.h>
#include <string>
#include <vector>

#include "ir/node.h"

namespace {

// [[0, 1, 2], [3, 4, 5]]
lz::Tensor two_by_three() { return lz::from_vector<float>({0, 1, 2, 3, 4, 5}, {2, 3}); }

TEST(ApiHabitsTest, AReductionTakesOneIntAxis) {
  const lz::Tensor x = two_by_three();
  EXPECT_EQ(lz::sum(x, 0).to_vector<float>(), (std::vector<float>{3, 5, 7}));
  EXPECT_EQ(lz::sum(x, -1).to_vector<float>(), (std::vector<float>{3, 12}));
  EXPECT_EQ(lz::max(x, 1, /*keepdims=*/true).shape(), lz::Shape({2, 1}));
  EXPECT_EQ(lz::mean(x, 1).to_vector<float>(), (std::vector<float>{1, 4}));
  EXPECT_EQ(lz::min(x, 0).to_vector<float>(), (std::vector<float>{0, 1, 2}));
  // {} still means every axis, {0} one axis, and a list several.
  EXPECT_EQ(lz::sum(x, {}).item<float>(), 15);
  EXPECT_EQ(lz::sum(x, {0}).shape(), lz::Shape({3}));
  EXPECT_EQ(lz::sum(x, {0, 1}).item<float>(), 15);
  const std::vector<int> axes = {1};
  EXPECT_EQ(lz::sum(x, axes).to_vector<float>(), (std::vector<float>{3, 12}));
  EXPECT_THROW(lz::sum(x, 2), lz::Error);
}

TEST(ApiHabitsTest, MethodFormsMatchTheFunctions) {
  const lz::Tensor x = two_by_three();
  EXPECT_EQ(x.sum().item<float>(), 15);
  EXPECT_EQ(x.sum(1).to_vector<float>(), (std::vector<float>{3, 12}));
  EXPECT_EQ(x.mean(0, true).to_vector<float>(), (std::vector<float>{1.5f, 2.5f, 3.5f}));
  EXPECT_EQ(x.mean(0, true).shape(), lz::Shape({1, 3}));
  EXPECT_EQ(x.max().item<float>(), 5);
  EXPECT_EQ(x.min(1).to_vector<float>(), (std::vector<float>{0, 3}));
  EXPECT_EQ(x.reshape({3, -1}).shape(), lz::Shape({3, 2}));
  EXPECT_EQ(x.transpose().to_vector<float>(), (std::vector<float>{0, 3, 1, 4, 2, 5}));
  // The method records the caller's line, as the function does.
  const lz::Tensor y = x.sum(0);
  const int line = __LINE__ - 1;
  EXPECT_EQ(y.node()->location.line(), static_cast<unsigned>(line));
}

TEST(ApiHabitsTest, CompoundAssignmentRebindsTheLeftHandle) {
  lz::Tensor x = two_by_three();
  const lz::Tensor before = x;
  x += 1;
  x *= x;  // (v + 1)^2
  x -= lz::from_vector<float>({1, 1, 1}, {3});
  x /= 2;
  const int line = __LINE__ - 1;
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{0, 1.5f, 4, 7.5f, 12, 17.5f}));
  EXPECT_EQ(before.to_vector<float>(), (std::vector<float>{0, 1, 2, 3, 4, 5}))
      << "another handle keeps the old value";
  EXPECT_EQ(x.node()->location.line(), static_cast<unsigned>(line)) << "the division's line";
  try {
    x += lz::from_vector<float>({1, 2}, {2});
    FAIL() << "shapes (2,3) and (2) were added";
  } catch (const lz::Error& error) {
    EXPECT_NE(std::string(error.what()).find("[add]"), std::string::npos) << error.what();
  }
}

}  // namespace
