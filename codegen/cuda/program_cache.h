// A fused kernel's CUDA program: its generated source and the image NVRTC made of it (a cubin, or
// PTX for the driver to JIT), found on disk when an earlier process compiled it.
//
// Memory caching is the runtime's (runtime/cuda/kernel_runner.cpp keeps the loaded module per
// device); this layer skips NVRTC, which takes tens to hundreds of milliseconds per kernel. The
// disk key is the whole translation unit with the architecture and the NVRTC version, so a new
// generator, a new NVRTC or another device compiles afresh, and a hash collision is a miss.
#pragma once

#include <string>
#include <vector>

#include "codegen/cuda/source.h"
#include "plan/fusion_plan.h"

namespace lz::codegen::cuda {

struct CudaProgram {
  std::string name;         // lz_<hash of the kernel's key>: its entries' prefix
  CudaKernelSource source;  // the entries and how to launch them
  std::vector<char> image;  // what cuModuleLoadData takes: a cubin, or PTX ending in '\0'
  bool is_ptx = false;      // the image is PTX (NVRTC does not know the architecture)
  bool from_disk = false;   // loaded from the disk cache, not compiled now
  double compile_ms = 0;    // generating the source + NVRTC or the disk read
};

/// lz_<hash of the kernel's key>: the prefix of `kernel`'s entries, the same for every kernel
/// that reuses its code.
std::string program_name(const plan::Kernel& kernel);

/// The program of `kernel` (is_cuda_compilable) for `architecture` ("sm_90"). `disk_directory`
/// empty: always compiles. A compiled image is stored on disk for later processes; a write that
/// fails costs them only a compile, so it is reported on stderr once, not raised. Counts
/// cache_misses, kernels_compiled, disk_cache_hits and compile_microseconds in lz::stats() (the
/// caller counts memory hits). Throws lz::Error when NVRTC is unavailable or fails.
CudaProgram find_or_compile_program(const plan::Kernel& kernel, const std::string& architecture,
                                    const std::string& disk_directory);

}  // namespace lz::codegen::cuda
