// The version the CUDA emulation's NVRTC reports. No NVRTC has it, so lazuli's disk cache, which
// keys programs by the NVRTC version, never mixes the emulation's images with cubins, and tests
// that check what only a real NVRTC produces can tell that they run on the emulation.
#pragma once

namespace lz::cuda_emulation {

constexpr int kNvrtcVersionMajor = 13;
constexpr int kNvrtcVersionMinor = 9999;

}  // namespace lz::cuda_emulation
