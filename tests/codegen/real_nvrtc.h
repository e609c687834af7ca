// Whether the tests of NVRTC's output (cubins per architecture, NVRTC's messages) can run: they
// need a real libnvrtc, not none and not the CUDA emulation's (tests/cuda_emulation/), whose
// images only the emulation runs.
#pragma once

#include <string>

#include "codegen/cuda/nvrtc.h"
#include "tests/cuda_emulation/emulated_nvrtc.h"

namespace lz::codegen::test {

/// True when a real NVRTC is loaded; otherwise false, with the reason in `why`.
inline bool real_nvrtc_available(std::string* why) {
  if (!cuda::nvrtc_available(why)) return false;
  const std::string emulated = std::to_string(cuda_emulation::kNvrtcVersionMajor) + "." +
                               std::to_string(cuda_emulation::kNvrtcVersionMinor);
  if (cuda::nvrtc_version() != emulated) return true;
  *why = "the loaded libnvrtc is the CUDA emulation's (version " + emulated +
         "); these tests check what a real NVRTC produces";
  return false;
}

}  // namespace lz::codegen::test
