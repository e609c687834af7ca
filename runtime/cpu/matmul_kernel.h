// A matmul kernel of the executor (runtime/kernel_executor.h) run as one call to BLAS
// (runtime/cpu/blas_matmul.h), alone or with its epilogue kernel run on each block of the
// product's rows.
#pragma once

#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

#include "ir/node.h"
#include "memory/buffer.h"
#include "plan/fusion_plan.h"
#include "runtime/kernel_executor.h"

namespace lz::runtime {

/// Runs a kernel that is one call to a library (a float matmul through BLAS, reading transposed
/// operands in place); returns false for any other kernel.
bool run_external(const plan::Kernel& kernel, const ExecutionOptions& options,
                  const std::vector<const memory::Buffer*>& inputs,
                  std::vector<std::shared_ptr<memory::Buffer>>& outputs);

/// A value's buffer on the host.
using HostBufferOf = std::function<const memory::Buffer&(const ir::Node*)>;

/// Runs `matmul`, a matmul kernel, together with its epilogue (plan::Kernel::epilogue): BLAS
/// computes the product in blocks of rows, and each block goes through the epilogue's compiled
/// loop as soon as it is computed, while it is in cache. The product is written to a buffer only
/// when `keep_product` (another kernel or the user reads it). `host_buffer_of` gives a value's
/// buffer on the host; an output of the epilogue may be written over a `dying` input of it, as
/// run_compiled does. Returns false, having run neither, where they cannot run so (BLAS does not
/// take the product, the epilogue does not compile to one loop over the product's elements or
/// rows, or compiling it or allocating its outputs fails): each then runs on its own, and a
/// failure of the epilogue's fails only its outputs.
bool run_with_epilogue(
    const plan::Kernel& matmul, const plan::Kernel& epilogue, bool keep_product,
    const ExecutionOptions& options, const HostBufferOf& host_buffer_of,
    const std::vector<std::shared_ptr<memory::Buffer>>& dying,
    std::unordered_map<const ir::Node*, std::shared_ptr<memory::Buffer>>& written);

}  // namespace lz::runtime
