// Running a fused kernel on a CUDA device: its generated source (codegen/cuda/) compiled once
// per device architecture (and kept on disk), its entries queued on a CUDA stream over device
// memory from the caching allocator. Host inputs (tensors created from host data) are copied in
// once.
//
// Everything is queued, nothing waited for (runtime/cuda/memory.h orders the memory): device
// errors surface where a blocking point waits for a buffer or copies it to the host.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "memory/buffer.h"
#include "plan/fusion_plan.h"

namespace lz::runtime::cuda {

/// What running a kernel did, for LZ_LOG and LZ_DUMP.
struct CudaKernelReport {
  std::string name;        // lz_<hash>: its entries' prefix; "cuBLAS" for a matmul
  bool compiled = false;   // compiled now by NVRTC
  bool from_disk = false;  // loaded now from the disk cache (neither: found in memory)
  double compile_ms = 0;   // source generation + NVRTC or the disk read + loading
  int entries_launched = 0;
  std::string source;       // the CUDA source, when asked for (dump)
  std::string ptx;          // its PTX, when asked for (dump)
  std::vector<char> cubin;  // its cubin, when asked for (dump)
};

/// Queues `kernel` on stream `stream` of CUDA device `device`; returns its outputs' buffers
/// (device memory written once the queued work runs); a matmul goes to cuBLAS
/// (cublas_matmul.h). Throws lz::Error naming the op for what the device cannot run (an integer
/// matmul) and for memory the allocator refuses. An input held elsewhere (on the host, on
/// another device) is read through the copy its buffer keeps on this device. A kernel not in
/// memory is loaded from `cache_directory` (empty: none) or compiled and stored there.
std::vector<std::shared_ptr<memory::Buffer>> run_cuda_kernel(
    const plan::Kernel& kernel, std::span<const memory::Buffer* const> inputs, int device,
    int stream, const std::string& cache_directory, CudaKernelReport& report, bool dump);

}  // namespace lz::runtime::cuda
