// The fixture of tests that run lazuli's kernels on a CUDA device: each skips, saying why, where
// there is no device or no NVRTC. The CUDA emulation (tests/cuda_emulation) runs them on the host.
// Under LAZULI_REQUIRE_CUDA=1 (tests/require_cuda.h) such a test fails instead.
#pragma once

#include <gtest/gtest.h>

#include <lazuli/lazuli.h>

#include <string>

#include "codegen/cuda/nvrtc.h"
#include "tests/require_cuda.h"

namespace lz::test {

class CudaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!lz::cuda::is_available()) {
      LAZULI_SKIP_WITHOUT_CUDA("no CUDA device: " << lz::cuda::unavailable_reason());
    }
    std::string why;
    if (!lz::codegen::cuda::nvrtc_available(&why)) {
      LAZULI_SKIP_WITHOUT_CUDA("no NVRTC: " << why);
    }
  }
};

}  // namespace lz::test
