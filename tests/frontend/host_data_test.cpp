// Data in and out of lazuli through the caller's memory: copies from pointers in row- and
// column-major order, borrowed memory without a copy and its release, std::vector<bool>, and
// reading a computed tensor's elements in place or into the caller's buffer.
#include <gtest/gtest.h>

#include <lazuli/lazuli.h>

#include <atomic>
#include <cstdint>
#include <numeric>
#include <span>
#include <string>
#include <vector>

#include "error_of.h"

namespace {

TEST(HostDataTest, FromDataCopiesRowMajorElements) {
  std::vector<double> values = {1, 2, 3, 4, 5, 6};
  const lz::Tensor x = lz::from_data(values.data(), {2, 3});
  values[0] = 100;  // a copy: the caller's memory is free again at once
  EXPECT_EQ(x.dtype(), lz::float64);
  EXPECT_EQ(x.to_vector<double>(), std::vector<double>({1, 2, 3, 4, 5, 6}));
}

TEST(HostDataTest, ColumnMajorElementsAreNotSilentlyTransposed) {
  // A 2x3 matrix as Eigen stores it by default, column after column:
  // [[0.5, -0.2, 7], [1.5, 3, -4]].
  const std::vector<float> columns = {0.5f, 1.5f, -0.2f, 3.0f, 7.0f, -4.0f};
  const lz::Tensor a = lz::from_data(columns.data(), {2, 3}, lz::Order::ColumnMajor);
  EXPECT_EQ(a.to_vector<float>(), std::vector<float>({0.5f, -0.2f, 7.0f, 1.5f, 3.0f, -4.0f}));
  EXPECT_EQ(lz::slice(a, {0, 1}, {1, 2}).item<float>(), -0.2f) << "a(0,1)";
}

TEST(HostDataTest, ColumnMajorOfThreeDimensionsMatchesItsStrides) {
  // Element (i, j, k) of a column-major (2,3,4) array is at i + 2*j + 6*k.
  std::vector<int32_t> column_major(24);
  std::iota(column_major.begin(), column_major.end(), 0);
  const std::vector<int32_t> row_major =
      lz::from_data(column_major.data(), {2, 3, 4}, lz::Order::ColumnMajor).to_vector<int32_t>();
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) {
      for (int k = 0; k < 4; ++k) {
        EXPECT_EQ(row_major[(i * 3 + j) * 4 + k], i + 2 * j + 6 * k) << i << "," << j << "," << k;
      }
    }
  }
  const int64_t scalar = 7;
  EXPECT_EQ(lz::from_data(&scalar, {}, lz::Order::ColumnMajor).item<int64_t>(), 7);
}

TEST(HostDataTest, BorrowedMemoryIsReadInPlaceAndReleasedOnceWhenNothingNeedsIt) {
  std::vector<float> memory = {1, 2, 3, 4};
  std::atomic<int> releases{0};
  {
    const lz::Tensor x = lz::borrow_data(memory.data(), {2, 2}, [&] { ++releases; });
    EXPECT_EQ(x.data<float>().data(), memory.data()) << "no copy";
    EXPECT_EQ(x.data<float>().size(), 4u);
    EXPECT_EQ(x.to_vector<float>(), memory);
    const lz::Tensor y = x * 2 + 1;
    EXPECT_EQ(y.to_vector<float>(), std::vector<float>({3, 5, 7, 9}));
    EXPECT_EQ(lz::sum(x).item<float>(), 10);
    EXPECT_EQ(releases, 0) << "released while a tensor still reads it";
    lz::waitall();
  }
  lz::waitall();
  EXPECT_EQ(releases, 1);
  EXPECT_EQ(memory, std::vector<float>({1, 2, 3, 4})) << "lazuli never writes borrowed memory";
}

TEST(HostDataTest, BoolVectorsComeInFromTheirPackedBits) {
  const std::vector<bool> flags = {true, false, true, true, false};
  const lz::Tensor x = lz::from_vector(flags, {5});
  EXPECT_EQ(x.dtype(), lz::bool_);
  EXPECT_EQ(x.to_vector<bool>(), flags);
  EXPECT_EQ(lz::sum(lz::from_vector<bool>({true, true, false}, {3})).item<int64_t>(), 2);
}

TEST(HostDataTest, DataViewsAComputedTensorWhereLazuliHoldsIt) {
  const lz::Tensor x = lz::arange(0, 6, 1, lz::int64) * 3;
  const std::span<const int64_t> view = x.data<int64_t>();
  EXPECT_EQ(std::vector<int64_t>(view.begin(), view.end()),
            std::vector<int64_t>({0, 3, 6, 9, 12, 15}));
  EXPECT_EQ(x.data<int64_t>().data(), view.data()) << "the same memory each time";
  EXPECT_EQ(lz::last_evaluation().reason, lz::EvaluationReason::Read);
}

TEST(HostDataTest, CopyToWritesTheCallersBuffer) {
  const lz::Tensor x = lz::reshape(lz::arange(0, 6), {2, 3}) + 0.5;
  std::vector<float> out(6, -1);
  x.copy_to(std::span(out));
  EXPECT_EQ(out, std::vector<float>({0.5f, 1.5f, 2.5f, 3.5f, 4.5f, 5.5f}));
}

TEST(HostDataTest, MistakesAreErrorsNamingTheCallAndWhatWouldBeValid) {
  const lz::Tensor x = lz::ones({2, 3});
  std::vector<float> small(5);
  const std::string size = error_of([&] { x.copy_to(std::span(small)); });
  EXPECT_NE(size.find("[copy_to] at "), std::string::npos) << size;
  EXPECT_NE(size.find("holds 5 elements but the tensor of shape (2,3) has 6"), std::string::npos)
      << size;
  std::vector<double> wrong_type(6);
  const std::string type = error_of([&] { x.copy_to(std::span(wrong_type)); });
  EXPECT_NE(type.find("copy_to<float>"), std::string::npos) << type;
  EXPECT_NE(error_of([&] { (void)x.data<int32_t>(); }).find("[data]"), std::string::npos);
  const float* null = nullptr;
  const std::string pointer = error_of([&] { lz::from_data(null, {2}); });
  EXPECT_NE(pointer.find("[from_data] at "), std::string::npos) << pointer;
  EXPECT_NE(pointer.find("null pointer"), std::string::npos) << pointer;
  EXPECT_NE(error_of([&] { lz::borrow_data(small.data(), {-1}, nullptr); }).find("negative"),
            std::string::npos);
}

}  // namespace
