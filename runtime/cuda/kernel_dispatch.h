// A kernel of the executor (runtime/kernel_executor.h) on its CUDA device: queued by
// runtime/cuda/kernel_runner.h, then reported under LZ_LOG and LZ_DUMP.
#pragma once

#include <memory>
#include <vector>

#include "memory/buffer.h"
#include "plan/fusion_plan.h"
#include "runtime/kernel_executor.h"

namespace lz::runtime {

/// Queues `kernel` on its CUDA device (runtime/cuda/kernel_runner.h); logs it under LZ_LOG and
/// writes its CUDA source, PTX, cubin and (with cuobjdump on the PATH) SASS under LZ_DUMP.
std::vector<std::shared_ptr<memory::Buffer>> run_on_cuda(
    const plan::Kernel& kernel, const ExecutionOptions& options,
    const std::vector<const memory::Buffer*>& inputs);

}  // namespace lz::runtime
