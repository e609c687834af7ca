// A kernel's output buffers, for each way the executor (runtime/kernel_executor.h) runs a kernel:
// running out of memory is an lz::Error naming the op and the line that recorded it.
#pragma once

#include <memory>
#include <vector>

#include "ir/node.h"
#include "memory/buffer.h"
#include "plan/fusion_plan.h"

namespace lz::runtime {

/// Throws the lz::Error of running out of memory computing `node`: its type and bytes, the op
/// and the line that recorded it.
[[noreturn]] void fail_out_of_memory(const ir::Node& node);

/// A buffer for each of `kernel`'s outputs: the input's memory for an output written over an
/// input (`written_over`, with `dying` the inputs' memory), else newly allocated; running out of
/// memory names the output. Counts outputs_written_in_place in lz::stats().
std::vector<std::shared_ptr<memory::Buffer>> allocate_outputs(
    const plan::Kernel& kernel, const plan::WrittenOver& written_over = {},
    const std::vector<std::shared_ptr<memory::Buffer>>& dying = {});

}  // namespace lz::runtime
