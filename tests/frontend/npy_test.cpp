// load_npy and save_npy: files written by numpy (tests/data/make_npy_files.py) read back with
// the values that script wrote, round trips of every dtype, and the errors for bad files.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
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
  expect_rejected(bytes_of(data_file("uint8_2.npy")), "dtype '|u1' is not one lazuli holds");
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
