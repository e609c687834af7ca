// A kernel of the executor (runtime/kernel_executor.h) run through the CPU JIT's compiled code
// (codegen/cpu/kernel_cache.h): each phase's range split across the thread pool, the chunks of a
// split reduction combined in order.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "codegen/cpu/kernel_cache.h"
#include "lazuli/error.h"
#include "memory/buffer.h"
#include "plan/fusion_plan.h"
#include "runtime/kernel_executor.h"

namespace lz::runtime {

/// The error of a kernel the JIT does not compile, under LZ_JIT=strict: names the kernel's last op
/// and the line that recorded it, the kernel's ops and result, and `why`.
Error refused_kernel_error(const plan::Kernel& kernel, const std::string& why);

/// The compiled code of `kernel` writing outputs over inputs as `written_over` says, its IR and
/// assembly written under LZ_DUMP; nullopt (logged) when the JIT cannot lower it, or, strict
/// (ExecutionOptions::jit_strict), throws refused_kernel_error.
std::optional<codegen::KernelLookup> compiled_code(const plan::Kernel& kernel,
                                                   const ExecutionOptions& options,
                                                   const plan::WrittenOver& written_over = {});

/// "lz_1234: memory runtime-sizes elements=16 inputs=2 outputs=1 ops=3 compile=0.000ms": a
/// compiled kernel in the log.
std::string compiled_kernel_text(const plan::Kernel& kernel, const codegen::KernelLookup& lookup);

/// Logs where the compile time of `lookup` went, at LZ_LOG=debug, when it was compiled or loaded
/// now.
void log_compile_times(const codegen::KernelLookup& lookup, const ExecutionOptions& options);

/// Which output of `kernel` is written over which of its `dying` inputs (per input, its memory
/// when nothing reads it after the kernel, else null): each output takes the first input not
/// taken yet of its dtype and size that plan::reads_index_aligned allows. Empty when none does.
plan::WrittenOver outputs_over_dying_inputs(
    const plan::Kernel& kernel, const std::vector<std::shared_ptr<memory::Buffer>>& dying);

/// Runs `kernel` through its compiled code; returns false when the JIT cannot lower it. `dying`
/// holds, per input, its memory when nothing reads it after this kernel
/// (memory::Buffer::exclusive_storage), else null: an output of its dtype and size that
/// plan::reads_index_aligned allows is written over it instead of into new memory.
bool run_compiled(const plan::Kernel& kernel, const ExecutionOptions& options,
                  const std::vector<const memory::Buffer*>& inputs,
                  const std::vector<std::shared_ptr<memory::Buffer>>& dying,
                  std::vector<std::shared_ptr<memory::Buffer>>& outputs);

}  // namespace lz::runtime
