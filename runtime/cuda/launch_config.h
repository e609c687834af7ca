// The grid of each entry of a generated CUDA kernel (the ABI in codegen/cuda/source.h): enough
// blocks to cover the work within a few waves of the device, never a launch of zero blocks.
#pragma once

#include <cstdint>

#include "codegen/cuda/source.h"

namespace lz::runtime::cuda {

/// Blocks per multiprocessor that grid-stride entries are capped at: enough resident blocks to
/// hide memory latency, few enough that each thread loops over several elements.
constexpr int64_t kWavesPerMultiprocessor = 32;

/// The number of blocks (of kCudaBlockSize threads) to launch `entry` with over `count`
/// positions on a device of `multiprocessors` SMs. Partial entries get at most
/// kCudaMaxPartialBlocks; Finish entries one block. 0 when `count` is 0: not launched.
int64_t grid_blocks(const codegen::cuda::CudaEntry& entry, int64_t count, int multiprocessors);

}  // namespace lz::runtime::cuda
