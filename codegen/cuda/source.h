// A fused kernel (plan/fusion_plan.h) as CUDA C++ source for NVRTC (codegen/cuda/nvrtc.h).
//
// Kernel ABI
// ----------
// A kernel becomes one or more entries (extern "C" __global__ functions), launched in the order
// of CudaKernelSource::entries on one stream. Every entry takes, in order:
//
//   const T* in0, ..., const T* in<N-1>   Kernel::inputs (bools as one byte each)
//   T* out0, ..., T* out<M-1>             Kernel::outputs
//   lz_u64* workspace                     only the entries of a split reduction (below)
//   lz_i64 count                          positions of the entry's range (CudaEntry)
//   lz_u64 s0, ..., lz_u64 s<K-1>         plan::kernel_scalars(kernel) (plan/kernel_signature.h)
//
// Sizes appear in the source only where kernel_key would hold them (shaped kernels): a flat
// kernel reads its size from `count`, and fill values, arange bounds and seeds always come from
// the scalars, so a new size (flat kernels) or scalar reuses the compiled code. Buffers are
// 256-byte aligned (flat kernels load and store groups of four elements as 16-byte accesses).
//
// Launch: every entry runs blocks of kCudaBlockSize threads, no dynamic shared memory; an entry
// whose count is 0 is not launched. The grid, by kind:
// - Elementwise and Broadcast: grid-stride loops, any grid of at least one block; enough blocks
//   for count / (kCudaBlockSize * elements_per_thread) within a few waves of the device.
// - Reduction: `threads_per_position` threads compute one kept position (1: a thread loops over
//   the reduced elements; kCudaBlockSize: a block does, with warp shuffles and shared memory);
//   grid-stride over positions, so any grid works: ceil(count * threads_per_position /
//   kCudaBlockSize) blocks, capped.
// - Partial then Finish: a reduction to one value over many elements. Partial runs G blocks
//   (1 <= G <= kCudaMaxPartialBlocks) over count = the reduced elements, block b writing its
//   state to workspace[(1 + b) * state_slots, ...). Finish runs one block with count = G:
//   it combines the G states into workspace[0, state_slots) and writes the results. A Broadcast
//   entry, when present, then computes the outputs shaped like the reduced input from the
//   combined state. The workspace holds (1 + G) * state_slots 64-bit words, uninitialized.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "plan/fusion_plan.h"

namespace lz::codegen::cuda {

inline constexpr int kCudaBlockSize = 256;
/// The most blocks a Partial entry runs: more add nothing on one device and would only grow the
/// workspace and the Finish entry's loop (which takes any number).
inline constexpr int kCudaMaxPartialBlocks = 1024;

struct CudaEntry {
  enum class Kind { Elementwise, Reduction, Partial, Finish, Broadcast };
  Kind kind = Kind::Elementwise;
  std::string symbol;
  /// count = kernel.nodes[range_node]->size(), or `fixed_count` when that is not negative
  /// (Partial and Broadcast: the reduced elements), except for Finish, whose count is G, the
  /// Partial entry's grid.
  int range_node = 0;
  int64_t fixed_count = -1;
  /// Elements each thread handles per step of its grid-stride loop (4 in a flat kernel's vector
  /// loop, else 1): the runtime sizes the grid by count / elements_per_thread.
  int elements_per_thread = 1;
  /// Reduction: threads cooperating on one kept position (1 or kCudaBlockSize).
  int threads_per_position = 1;
  /// Whether the entry takes the workspace parameter.
  bool uses_workspace = false;
};

struct CudaKernelSource {
  /// The kernel's entries and nothing else: device_preamble() (codegen/cuda/preamble.h) must
  /// come first in the translation unit. Several kernels with distinct names may share one.
  std::string definitions;
  std::vector<CudaEntry> entries;
  /// 64-bit words of one reduction state in the workspace (split reductions; else 0).
  int state_slots = 0;

  /// device_preamble() followed by the definitions: a complete translation unit.
  std::string translation_unit() const;
};

/// Whether the CUDA code generator takes `kernel`: every kernel except a matmul (cuBLAS runs
/// it) or a data leaf.
bool is_cuda_compilable(const plan::Kernel& kernel);

/// The CUDA source of `kernel` (is_cuda_compilable); entry symbols start with `name`.
/// Throws lz::Error naming the op and dtype the generator has no form for, and
/// plan::UnsupportedKernel (plan/unsupported_kernel.h) for a kernel structure that the
/// CPU lowering does not take either.
CudaKernelSource generate_cuda_source(const plan::Kernel& kernel, const std::string& name);

}  // namespace lz::codegen::cuda
