// load_npy and save_npy: files written by numpy (tests/data/make_npy_files.py) read back with
// the values that script wrote, round trips of every dtype, and the errors for bad files.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include <lazuli/lazuli.h>
#include <lazuli/npy.h>

namespace {

using lz::Shape;
using lz::Tensor;

std::string data_file(const std::string& name) {
  const char* dir = std::getenv("LAZULI_TEST_DATA");
  return std::string(dir != nullptr ? dir : LAZULI_TEST_DATA_DIR) + "/npy/" + name;
}

std::string bytes_of(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

class NpyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("lazuli_npy_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  /// Expects load_npy of a file holding `bytes` to fail with a message containing `what`.
  void expect_rejected(const std::string& bytes, const std::string& what) {
    const std::string file = path("bad.npy");
    std::ofstream(file, std::ios::binary) << bytes;
    try {
      lz::load_npy(file);
      ADD_FAILURE() << "expected an error containing: " << what;
    } catch (const lz::Error& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find("[load_npy] at "), std::string::npos) << message;
      EXPECT_NE(message.find(file), std::string::npos) << message;
      EXPECT_NE(message.find(what), std::string::npos) << message;
    }
  }

  std::filesystem::path dir_;
};

TEST_F(NpyTest, FilesWrittenByNumpyReadBack) {
  const Tensor f32 = lz::load_npy(data_file("float32_2x3.npy"));
  EXPECT_EQ(f32.shape(), (Shape{2, 3}));
  EXPECT_EQ(f32.to_vector<float>(), (std::vector<float>{0, 0.25, 0.5, 0.75, 1, 1.25}));
  EXPECT_EQ(lz::load_npy(data_file("float64_3.npy")).to_vector<double>(),
            (std::vector<double>{1.5, -2.25, 1e300}));
  const Tensor i32 = lz::load_npy(data_file("int32_2x2x2.npy"));
  EXPECT_EQ(i32.shape(), (Shape{2, 2, 2}));
  EXPECT_EQ(i32.to_vector<int32_t>(), (std::vector<int32_t>{-4, -3, -2, -1, 0, 1, 2, 3}));
  const Tensor i64 = lz::load_npy(data_file("int64_0d.npy"));
  EXPECT_EQ(i64.shape(), Shape{});
  EXPECT_EQ(i64.item<int64_t>(), -(int64_t{1} << 40));
  EXPECT_EQ(lz::load_npy(data_file("bool_4.npy")).to_vector<bool>(),
            (std::vector<bool>{true, false, false, true}));
  const Tensor empty = lz::load_npy(data_file("float32_0x3.npy"));
  EXPECT_EQ(empty.shape(), (Shape{0, 3}));
  EXPECT_EQ(lz::load_npy(data_file("float64_big_endian_2.npy")).to_vector<double>(),
            (std::vector<double>{0.5, -3}));
  const Tensor fortran = lz::load_npy(data_file("int32_fortran_2x3.npy"));
  EXPECT_EQ(fortran.shape(), (Shape{2, 3}));
  EXPECT_EQ(fortran.to_vector<int32_t>(), (std::vector<int32_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(lz::load_npy(data_file("float32_version2_2.npy")).to_vector<float>(),
            (std::vector<float>{1, 2}));
  EXPECT_EQ(lz::load_npy(data_file("float32_version3_2.npy")).to_vector<float>(),
            (std::vector<float>{3, 4}));
}

/// The bytes of a (2, 3) .npy file of dtype `descr` (4 characters, as '<f4') holding `data`.
std::string npy_2x3(const std::string& descr, const std::string& data) {
  std::string bytes = bytes_of(data_file("float32_2x3.npy"));
  bytes.replace(bytes.find("'<f4'"), 5, "'" + descr + "'");
  return bytes.substr(0, bytes.size() - 24) + data;
}

/// The little-endian bytes of `values`.
template <class T>
std::string bytes_of_values(std::initializer_list<T> values) {
  std::string bytes;
  for (T value : values) {
    for (size_t b = 0; b < sizeof(T); ++b) {
      bytes += static_cast<char>(static_cast<uint64_t>(value) >> (8 * b) & 0xff);
    }
  }
  return bytes;
}

TEST_F(NpyTest, NarrowDtypesAreReadWidenedAsAsarrayWidensThem) {
  // float16: 1, -2, 65504 (the largest), 2^-24 (the smallest subnormal), infinity, -0.
  std::ofstream(path("f2.npy"), std::ios::binary) << npy_2x3(
      "<f2", bytes_of_values<uint16_t>({0x3c00, 0xc000, 0x7bff, 0x0001, 0x7c00, 0x8000}));
  const Tensor halves = lz::load_npy(path("f2.npy"));
  EXPECT_EQ(halves.dtype(), lz::float32);
  EXPECT_EQ(halves.shape(), (Shape{2, 3}));
  const std::vector<float> expected{
      1, -2, 65504, std::ldexp(1.0f, -24), std::numeric_limits<float>::infinity(), -0.0f};
  const std::vector<float> got = halves.to_vector<float>();
  EXPECT_EQ(got, expected);
  EXPECT_TRUE(std::signbit(got[5]));
  // Big-endian: the same values, bytes swapped.
  std::ofstream(path("f2_big.npy"), std::ios::binary) << npy_2x3(
      ">f2", bytes_of_values<uint16_t>({0x003c, 0x00c0, 0xff7b, 0x0100, 0x007c, 0x0080}));
  EXPECT_EQ(lz::load_npy(path("f2_big.npy")).to_vector<float>(), expected);
  std::ofstream(path("i1.npy"), std::ios::binary)
      << npy_2x3("|i1", bytes_of_values<uint8_t>({0x80, 0xff, 0, 1, 0x7f, 5}));
  const Tensor bytes = lz::load_npy(path("i1.npy"));
  EXPECT_EQ(bytes.dtype(), lz::int32);
  EXPECT_EQ(bytes.to_vector<int32_t>(), (std::vector<int32_t>{-128, -1, 0, 1, 127, 5}));
  std::ofstream(path("u2.npy"), std::ios::binary)
      << npy_2x3("<u2", bytes_of_values<uint16_t>({0, 1, 0xffff, 0x8000, 300, 7}));
  EXPECT_EQ(lz::load_npy(path("u2.npy")).to_vector<int32_t>(),
            (std::vector<int32_t>{0, 1, 65535, 32768, 300, 7}));
  std::ofstream(path("u4.npy"), std::ios::binary)
      << npy_2x3("<u4", bytes_of_values<uint32_t>({0, 1, 0xffffffffu, 0x80000000u, 9, 2}));
  const Tensor words = lz::load_npy(path("u4.npy"));
  EXPECT_EQ(words.dtype(), lz::int64);
  EXPECT_EQ(words.to_vector<int64_t>(), (std::vector<int64_t>{0, 1, 4294967295, 2147483648, 9, 2}));
  // A file numpy wrote.
  EXPECT_EQ(lz::load_npy(data_file("uint8_2.npy")).to_vector<int32_t>(),
            (std::vector<int32_t>{1, 2}));
}

TEST_F(NpyTest, SavedFilesAreByteForByteWhatNumpyWrites) {
  const Tensor x = lz::reshape(lz::arange(0, 6, 1), {2, 3}) / 4;  // pending: save blocks on it
  lz::save_npy(path("x.npy"), x);
  EXPECT_EQ(bytes_of(path("x.npy")), bytes_of(data_file("float32_2x3.npy")));
  lz::save_npy(path("b.npy"), lz::from_vector<bool>({true, false, false, true}, {4}));
  EXPECT_EQ(bytes_of(path("b.npy")), bytes_of(data_file("bool_4.npy")));
  lz::save_npy(path("s.npy"), lz::full({}, -1099511627776.0, lz::int64));
  EXPECT_EQ(bytes_of(path("s.npy")), bytes_of(data_file("int64_0d.npy")));
  EXPECT_FALSE(std::filesystem::exists(path("x.npy.partial")));
}

TEST_F(NpyTest, EveryDtypeAndShapeRoundTrips) {
  const std::vector<Shape> shapes{{}, {0}, {5}, {2, 0, 3}, {2, 3, 4}};
  for (lz::DType dtype : lz::kAllDTypes) {
    for (const Shape& shape : shapes) {
      SCOPED_TRACE(std::string(lz::dtype_name(dtype)) + " " + lz::shape_string(shape));
      const int64_t n = lz::shape_size(shape);
      const Tensor x = lz::reshape(
          lz::astype(lz::arange(0, static_cast<double>(n), 1, lz::float64) * 1.5 - 2, dtype),
          shape);
      lz::save_npy(path("x.npy"), x);
      const Tensor y = lz::load_npy(path("x.npy"));
      ASSERT_EQ(y.dtype(), dtype);
      ASSERT_EQ(y.shape(), shape);
      EXPECT_EQ(y.astype(lz::float64).to_vector<double>(),
                x.astype(lz::float64).to_vector<double>());
    }
  }
}

TEST_F(NpyTest, BadFilesAreErrorsNamingTheFileAndTheProblem) {
  const std::string good = bytes_of(data_file("float32_2x3.npy"));
  expect_rejected("x,y\n1,2\n", "not a .npy file");
  expect_rejected(good.substr(0, 9), "header is truncated");
  expect_rejected(good.substr(0, 40), "header is truncated: it says 118 bytes");
  expect_rejected(good.substr(0, good.size() - 1), "needs 24 bytes of data, the file has 23");
  expect_rejected(good + "x", "needs 24 bytes of data, the file has 25");
  std::string complex = good;
  complex.replace(complex.find("'<f4'"), 5, "'<c8'");
  expect_rejected(complex, "dtype '<c8' is not one lazuli reads");
  std::string bad_shape = good;
  bad_shape.replace(bad_shape.find("(2, 3)"), 6, "(2, x)");
  expect_rejected(bad_shape, "is not a tuple of sizes");
  std::string version = good;
  version[6] = 9;
  expect_rejected(version, "format version 9");
  try {
    lz::load_npy(path("missing.npy"));
    FAIL() << "expected an error";
  } catch (const lz::Error& error) {
    EXPECT_NE(std::string(error.what()).find("cannot open it"), std::string::npos) << error.what();
  }
  EXPECT_THROW(lz::save_npy(path("no/such/dir/x.npy"), lz::ones({2})), lz::Error);
}

}  // namespace
