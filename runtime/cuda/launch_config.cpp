#include "runtime/cuda/launch_config.h"

#include <algorithm>

namespace lz::runtime::cuda {

using codegen::cuda::CudaEntry;
using codegen::cuda::kCudaBlockSize;
using codegen::cuda::kCudaMaxPartialBlocks;

int64_t grid_blocks(const CudaEntry& entry, int64_t count, int multiprocessors) {
  if (count <= 0) return 0;
  const int64_t cap = kWavesPerMultiprocessor * std::max(multiprocessors, 1);
  const auto blocks_for = [](int64_t threads) {
    return std::max<int64_t>(1, (threads + kCudaBlockSize - 1) / kCudaBlockSize);
  };
  switch (entry.kind) {
    case CudaEntry::Kind::Elementwise:
    case CudaEntry::Kind::Broadcast: {
      const int64_t per_thread = std::max(entry.elements_per_thread, 1);
      return std::min(blocks_for((count + per_thread - 1) / per_thread), cap);
    }
    case CudaEntry::Kind::Reduction:
      return std::min(blocks_for(count * std::max(entry.threads_per_position, 1)), cap);
    case CudaEntry::Kind::Partial:
      return std::min({blocks_for(count), cap, int64_t{kCudaMaxPartialBlocks}});
    case CudaEntry::Kind::Finish: return 1;
  }
  return 1;
}

}  // namespace lz::runtime::cuda
