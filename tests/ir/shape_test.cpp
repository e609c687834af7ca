// lz::Shape keeps four dimensions inline and more on the heap, and means what std::vector means
// for every operation lazuli uses: each test applies the same steps to a std::vector and
// compares.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

#include "lazuli/shape.h"

namespace lz {
namespace {

std::vector<int64_t> as_vector(const Shape& shape) { return {shape.begin(), shape.end()}; }

TEST(ShapeTest, RandomEditsAgreeWithAVectorAcrossTheInlineRoom) {
  std::mt19937 random(7);
  for (int round = 0; round < 200; ++round) {
    Shape shape;
    std::vector<int64_t> expected;
    for (int step = 0; step < 24; ++step) {
      const auto value = static_cast<int64_t>(random() % 100);
      const size_t at = expected.empty() ? 0 : random() % (expected.size() + 1);
      switch (random() % 8) {
        case 0:
        case 1:
          shape.push_back(value);
          expected.push_back(value);
          break;
        case 2:
          shape.insert(shape.begin() + at, value);
          expected.insert(expected.begin() + static_cast<int64_t>(at), value);
          break;
        case 3: {
          const size_t count = random() % 4;
          shape.insert(shape.begin() + at, count, value);
          expected.insert(expected.begin() + static_cast<int64_t>(at), count, value);
          break;
        }
        case 4: {  // the shape's own dimensions, inserted into itself
          shape.insert(shape.begin() + at, shape.begin(), shape.end());
          const std::vector<int64_t> inserted = expected;  // a vector's own range is not allowed
          expected.insert(expected.begin() + static_cast<int64_t>(at), inserted.begin(),
                          inserted.end());
          break;
        }
        case 5:
          if (at < expected.size()) {
            shape.erase(shape.begin() + at);
            expected.erase(expected.begin() + static_cast<int64_t>(at));
          }
          break;
        case 6: {
          const size_t count = random() % 7;
          shape.resize(count, value);
          expected.resize(count, value);
          break;
        }
        case 7:
          if (expected.size() > 12) {
            shape.assign(expected.begin(), expected.begin() + 2);
            expected.resize(2);
          }
          break;
      }
      ASSERT_EQ(as_vector(shape), expected) << "round " << round << ", step " << step;
      ASSERT_EQ(shape.size(), expected.size());
      ASSERT_EQ(shape.empty(), expected.empty());
    }
  }
}

TEST(ShapeTest, CopiesAndMovesKeepTheDimensionsInlineOrOnTheHeap) {
  for (const std::vector<int64_t>& dims :
       {std::vector<int64_t>{}, {3}, {2, 3, 4, 5}, {1, 2, 3, 4, 5, 6, 7}}) {
    const Shape original(dims);
    Shape copy = original;
    EXPECT_EQ(as_vector(copy), dims);
    Shape moved = std::move(copy);
    EXPECT_EQ(as_vector(moved), dims);
    EXPECT_TRUE(copy.empty());  // NOLINT(bugprone-use-after-move): defined empty
    copy = moved;               // a moved-from shape takes values again
    EXPECT_EQ(as_vector(copy), dims);
    Shape assigned{9, 9, 9, 9, 9, 9};
    assigned = std::move(moved);
    EXPECT_EQ(as_vector(assigned), dims);
    assigned = original;
    EXPECT_EQ(assigned.to_vector(), dims);
  }
}

TEST(ShapeTest, ComparesAndOrdersLikeAVector) {
  const std::vector<std::vector<int64_t>> lists = {
      {}, {0}, {1}, {1, 2}, {1, 2, 3, 4, 5}, {2}, {1, 3}, {1, 2, 3, 4, 6}};
  for (const std::vector<int64_t>& a : lists) {
    for (const std::vector<int64_t>& b : lists) {
      EXPECT_EQ(Shape(a) == Shape(b), a == b);
      EXPECT_EQ(Shape(a) < Shape(b), a < b);
    }
  }
  EXPECT_EQ(Shape({2, 3}), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(Shape(3, 1), (Shape{1, 1, 1}));
}

TEST(ShapeTest, ReadsAsTheVectorItWasBefore) {
  const Shape shape{2, 3, 4, 5, 6};
  const std::vector<int64_t> dims = shape;  // code written when Shape was a std::vector
  EXPECT_EQ(dims, (std::vector<int64_t>{2, 3, 4, 5, 6}));
  EXPECT_EQ(shape.at(4), 6);
  EXPECT_THROW(static_cast<void>(shape.at(5)), std::out_of_range);
  Shape assigned{1};
  assigned.assign(6, 7);
  EXPECT_EQ(assigned, Shape(6, 7));
  assigned.assign({8, 9});
  EXPECT_EQ(assigned.to_vector(), (std::vector<int64_t>{8, 9}));
}

}  // namespace
}  // namespace lz
