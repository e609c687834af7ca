// LAZULI_REQUIRE_CUDA=1, which CTest's runs on the CUDA emulation set (the *_emulated tests and
// the emulated mpirun runs): a GPU test that would skip for want of a CUDA device, NVRTC or NCCL
// fails instead, so a run whose GPU tests all skipped cannot pass as if they had run. Elsewhere
// such a test skips, saying why. A skip for another reason (a test that needs two devices) stays
// a skip.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string_view>

namespace lz::test {

/// Whether LAZULI_REQUIRE_CUDA=1.
inline bool cuda_required() {
  const char* required = std::getenv("LAZULI_REQUIRE_CUDA");
  return required != nullptr && std::string_view(required) == "1";
}

}  // namespace lz::test

/// Skips the current test for want of the GPU stack, saying why (a stream expression), or fails
/// it under LAZULI_REQUIRE_CUDA=1. Like GTEST_SKIP, it returns from the function.
#define LAZULI_SKIP_WITHOUT_CUDA(why)                                                 \
  do {                                                                                \
    if (::lz::test::cuda_required()) {                                                \
      GTEST_FAIL() << "LAZULI_REQUIRE_CUDA=1, but this GPU test would skip: " << why; \
    }                                                                                 \
    GTEST_SKIP() << why;                                                              \
  } while (false)
