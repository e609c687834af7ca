// Grid sizes for the entries of generated CUDA kernels, against the launch rules of the kernel
// ABI (codegen/cuda/source.h), computed by hand for a 132-SM device (an H200).
#include <gtest/gtest.h>

#include "runtime/cuda/launch_config.h"

namespace {

using lz::codegen::cuda::CudaEntry;
using lz::runtime::cuda::grid_blocks;

constexpr int kSms = 132;

CudaEntry entry(CudaEntry::Kind kind, int elements_per_thread = 1, int threads_per_position = 1) {
  CudaEntry made;
  made.kind = kind;
  made.elements_per_thread = elements_per_thread;
  made.threads_per_position = threads_per_position;
  return made;
}

TEST(CudaLaunchConfigTest, AnEmptyRangeIsNotLaunched) {
  EXPECT_EQ(grid_blocks(entry(CudaEntry::Kind::Elementwise), 0, kSms), 0);
  EXPECT_EQ(grid_blocks(entry(CudaEntry::Kind::Finish), 0, kSms), 0);
}

TEST(CudaLaunchConfigTest, ElementwiseCoversTheRangeUpToAFewWaves) {
  const CudaEntry scalar = entry(CudaEntry::Kind::Elementwise);
  EXPECT_EQ(grid_blocks(scalar, 1, kSms), 1);
  EXPECT_EQ(grid_blocks(scalar, 256, kSms), 1);
  EXPECT_EQ(grid_blocks(scalar, 257, kSms), 2);
  EXPECT_EQ(grid_blocks(scalar, 1 << 20, kSms), 4096);      // 2^20 / 256
  EXPECT_EQ(grid_blocks(scalar, 1 << 26, kSms), 32 * 132);  // capped: threads loop
  const CudaEntry vector = entry(CudaEntry::Kind::Elementwise, 4);
  EXPECT_EQ(grid_blocks(vector, 1 << 20, kSms), 1024);  // four elements per thread
  EXPECT_EQ(grid_blocks(vector, 1025, kSms), 2);        // 257 threads
}

TEST(CudaLaunchConfigTest, ReductionsGiveEachPositionItsThreads) {
  EXPECT_EQ(grid_blocks(entry(CudaEntry::Kind::Reduction, 1, 1), 1000, kSms), 4);
  EXPECT_EQ(grid_blocks(entry(CudaEntry::Kind::Reduction, 1, 256), 1000, kSms), 1000);
  EXPECT_EQ(grid_blocks(entry(CudaEntry::Kind::Reduction, 1, 256), 100000, kSms), 32 * 132);
}

TEST(CudaLaunchConfigTest, ASplitReductionHasBoundedPartialsAndOneFinishingBlock) {
  const CudaEntry partial = entry(CudaEntry::Kind::Partial);
  EXPECT_EQ(grid_blocks(partial, 1000, kSms), 4);
  EXPECT_EQ(grid_blocks(partial, int64_t{1} << 30, kSms), 1024);  // kCudaMaxPartialBlocks
  EXPECT_EQ(grid_blocks(partial, int64_t{1} << 30, 8), 256);      // a small device: 32 * 8
  EXPECT_EQ(grid_blocks(entry(CudaEntry::Kind::Finish), 1024, kSms), 1);
}

}  // namespace
