// operator<<: numpy-like text, checked character by character.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>

#include <lazuli/lazuli.h>

namespace {

std::string printed(const lz::Tensor& x) {
  std::ostringstream out;
  out << x;
  return out.str();
}

TEST(PrintingTest, MatrixColumnsAlignAndWholeFloatsEndInADot) {
  EXPECT_EQ(printed(lz::from_vector<float>({1, 2.5, -3, 4}, {2, 2})),
            "tensor([[ 1., 2.5],\n"
            "        [-3.,  4.]], shape=(2,2), dtype=float32)");
}

TEST(PrintingTest, VectorOfIntegers) {
  EXPECT_EQ(printed(lz::from_vector<int32_t>({1, -20, 3}, {3})),
            "tensor([  1, -20,   3], shape=(3), dtype=int32)");
}

TEST(PrintingTest, ZeroDimensionalTensorPrintsItsValue) {
  EXPECT_EQ(printed(lz::full({}, 5)), "tensor(5., shape=(), dtype=float32)");
}

TEST(PrintingTest, BoolsPrintAsWords) {
  const lz::Tensor x = lz::from_vector<int64_t>({1, 5}, {2});
  EXPECT_EQ(printed(x < 3), "tensor([ true, false], shape=(2), dtype=bool)");
}

TEST(PrintingTest, EmptyTensorsPrintEmptyLists) {
  EXPECT_EQ(printed(lz::zeros({0})), "tensor([], shape=(0), dtype=float32)");
  EXPECT_EQ(printed(lz::zeros({2, 0}, lz::int64)),
            "tensor([[],\n        []], shape=(2,0), dtype=int64)");
}

TEST(PrintingTest, ThreeDimensionalBlocksAreSeparatedByABlankLine) {
  EXPECT_EQ(printed(lz::arange(0, 8, 1, lz::int32) * 1),
            "tensor([0, 1, 2, 3, 4, 5, 6, 7], shape=(8), dtype=int32)");
  EXPECT_EQ(printed(lz::reshape(lz::arange(0, 8, 1, lz::int64), {2, 2, 2})),
            "tensor([[[0, 1],\n"
            "         [2, 3]],\n"
            "\n"
            "        [[4, 5],\n"
            "         [6, 7]]], shape=(2,2,2), dtype=int64)");
}

TEST(PrintingTest, LargeTensorsElideTheMiddleOfEachAxis) {
  EXPECT_EQ(printed(lz::arange(0, 2000)),
            "tensor([   0.,    1.,    2., ..., 1997., 1998., 1999.], shape=(2000), "
            "dtype=float32)");
  const std::string matrix = printed(lz::reshape(lz::arange(0, 1100, 1, lz::int32), {110, 10}));
  EXPECT_NE(matrix.find("[   0,    1,    2, ...,    7,    8,    9],"), std::string::npos) << matrix;
  EXPECT_NE(matrix.find(" ...,\n"), std::string::npos) << "rows elided:\n" << matrix;
  EXPECT_NE(matrix.find("[1090, 1091, 1092, ..., 1097, 1098, 1099]]"), std::string::npos) << matrix;
}

TEST(PrintingTest, NonFiniteFloats) {
  const double inf = std::numeric_limits<double>::infinity();
  const lz::Tensor x = lz::from_vector<double>({inf, -inf, -std::nan("")}, {3});
  EXPECT_EQ(printed(x), "tensor([ inf, -inf,  nan], shape=(3), dtype=float64)");
}

}  // namespace
