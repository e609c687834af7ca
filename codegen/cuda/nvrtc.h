// NVRTC, loaded at run time: CUDA C++ source to a cubin (and PTX). Nothing here needs the CUDA
// headers or a GPU; without libnvrtc the library still builds and nvrtc_available says why.
#pragma once

#include <string>
#include <vector>

namespace lz::codegen::cuda {

/// Whether libnvrtc can be loaded (tried once per process: libnvrtc.so.13, .so.12, .so, then
/// /usr/local/cuda/lib64/libnvrtc.so.13). When it cannot, `why` (if given) says what failed.
bool nvrtc_available(std::string* why = nullptr);

/// The loaded NVRTC's version ("13.0"); empty when it cannot be loaded.
std::string nvrtc_version();

struct CompiledCuda {
  /// Machine code for `arch`; empty when NVRTC cannot target it, and `ptx` is the fallback.
  std::vector<char> cubin;
  /// PTX, when asked for or as the fallback.
  std::string ptx;
  /// The architecture the cubin is for ("sm_90") or the PTX targets ("compute_90").
  std::string target;
  /// NVRTC's log (warnings) of a successful compilation.
  std::string log;
};

/// Compiles `source` for `arch` ("sm_90") with IEEE-exact math (no fast math, no FMA
/// contraction), so results match the interpreter. When NVRTC does not support `arch`, compiles
/// PTX for the newest virtual architecture it supports below it, for the driver to JIT. Throws
/// lz::Error when NVRTC is unavailable, or on a failed compilation with NVRTC's full log and the
/// source with numbered lines.
CompiledCuda compile_cuda(const std::string& source, const std::string& arch,
                          bool want_ptx = false);

}  // namespace lz::codegen::cuda
