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

/// Allocates a buffer for each of `kernel`'s outputs; running out of memory names the output.
std::vector<std::shared_ptr<memory::Buffer>> allocate_outputs(const plan::Kernel& kernel);

}  // namespace lz::runtime
