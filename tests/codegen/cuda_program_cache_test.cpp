// The CUDA program cache (codegen/cuda/program_cache.h): a kernel compiled by NVRTC once is
// loaded from disk by later lookups of the same kernel and architecture, and never for another
// architecture or from a damaged entry. NVRTC runs on every machine with the CUDA toolkit, so
// this runs without a GPU.
#include <gtest/gtest.h>

#include <lazuli/lazuli.h>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <stdlib.h>

#include "codegen/cuda/nvrtc.h"
#include "codegen/cuda/program_cache.h"
#include "codegen/disk_cache.h"
#include "tests/codegen/cuda_test_kernels.h"
#include "tests/codegen/real_nvrtc.h"

namespace {

namespace fs = std::filesystem;
using lz::codegen::cuda::CudaProgram;
using lz::codegen::cuda::find_or_compile_program;

class CudaProgramCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!lz::codegen::test::real_nvrtc_available(&why)) GTEST_SKIP() << why;
    std::string pattern = (fs::temp_directory_path() / "lazuli-cuda-cache-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    directory_ = pattern;
  }
  void TearDown() override {
    if (!directory_.empty()) fs::remove_all(directory_);
  }

  /// The one fused kernel of y = sqrt(x * scale + 1) over n float32 elements (a flat kernel:
  /// the size and the scale are launch arguments, not part of its code).
  static lz::plan::Kernel kernel(int64_t n, double scale) {
    const lz::Tensor x = lz::arange(0, static_cast<double>(n), 1, lz::float32);
    std::vector<lz::plan::Kernel> kernels =
        lz::codegen::test::kernels_of({lz::sqrt(x * scale + 1.0)});
    EXPECT_EQ(kernels.size(), 1u);
    return kernels.back();
  }

  std::vector<fs::path> entries() const {
    std::vector<fs::path> files;
    for (const fs::directory_entry& entry : fs::directory_iterator(directory_)) {
      files.push_back(entry.path());
    }
    return files;
  }

  std::string directory_;
};

TEST_F(CudaProgramCacheTest, ASecondLookupLoadsTheCubinFromDisk) {
  const lz::plan::Kernel first_kernel = kernel(1000, 2.0);
  lz::reset_stats();
  const CudaProgram compiled = find_or_compile_program(first_kernel, "sm_90", directory_);
  EXPECT_FALSE(compiled.from_disk);
  EXPECT_FALSE(compiled.is_ptx);
  ASSERT_FALSE(compiled.image.empty());
  EXPECT_EQ(lz::stats().kernels_compiled, 1);
  ASSERT_EQ(entries().size(), 1u) << "the compiled program was not stored";

  // Another size and scale: the same code, found on disk.
  const CudaProgram loaded = find_or_compile_program(kernel(5000, 3.0), "sm_90", directory_);
  EXPECT_TRUE(loaded.from_disk);
  EXPECT_EQ(loaded.name, compiled.name);
  EXPECT_EQ(loaded.image, compiled.image);
  EXPECT_EQ(loaded.source.translation_unit(), compiled.source.translation_unit());
  ASSERT_EQ(loaded.source.entries.size(), compiled.source.entries.size());
  EXPECT_EQ(lz::stats().kernels_compiled, 1);
  EXPECT_EQ(lz::stats().disk_cache_hits, 1);
}

TEST_F(CudaProgramCacheTest, AnotherArchitectureCompilesAgain) {
  const lz::plan::Kernel same = kernel(1000, 2.0);
  const CudaProgram hopper = find_or_compile_program(same, "sm_90", directory_);
  const CudaProgram ampere = find_or_compile_program(same, "sm_80", directory_);
  EXPECT_FALSE(ampere.from_disk);
  EXPECT_NE(ampere.image, hopper.image);
  EXPECT_EQ(entries().size(), 2u);
  EXPECT_TRUE(find_or_compile_program(same, "sm_80", directory_).from_disk);
}

TEST_F(CudaProgramCacheTest, PtxForAnUnknownArchitectureIsStoredAsPtx) {
  const lz::plan::Kernel same = kernel(1000, 2.0);
  const CudaProgram compiled = find_or_compile_program(same, "sm_999", directory_);
  ASSERT_TRUE(compiled.is_ptx);
  ASSERT_FALSE(compiled.image.empty());
  EXPECT_EQ(compiled.image.back(), '\0') << "the driver reads PTX as a C string";
  const CudaProgram loaded = find_or_compile_program(same, "sm_999", directory_);
  EXPECT_TRUE(loaded.from_disk);
  EXPECT_TRUE(loaded.is_ptx);
  EXPECT_EQ(loaded.image, compiled.image);
}

TEST_F(CudaProgramCacheTest, ADamagedEntryIsCompiledAgain) {
  const lz::plan::Kernel same = kernel(1000, 2.0);
  const CudaProgram compiled = find_or_compile_program(same, "sm_90", directory_);
  ASSERT_EQ(entries().size(), 1u);
  std::ofstream(entries()[0], std::ios::binary | std::ios::trunc) << "not a cache entry";
  lz::reset_stats();
  const CudaProgram again = find_or_compile_program(same, "sm_90", directory_);
  EXPECT_FALSE(again.from_disk);
  EXPECT_EQ(again.image, compiled.image);
  EXPECT_EQ(lz::stats().kernels_compiled, 1);
  EXPECT_TRUE(find_or_compile_program(same, "sm_90", directory_).from_disk)
      << "the recompiled program was not stored again";
}

TEST_F(CudaProgramCacheTest, NoDirectoryMeansNoDiskCache) {
  const lz::plan::Kernel same = kernel(1000, 2.0);
  EXPECT_FALSE(find_or_compile_program(same, "sm_90", "").from_disk);
  EXPECT_FALSE(find_or_compile_program(same, "sm_90", "").from_disk);
  EXPECT_TRUE(entries().empty());
}

}  // namespace
