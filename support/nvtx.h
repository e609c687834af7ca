// NVTX ranges, so that Nsight Systems shows lazuli's launches, compiles and kernel runs next to
// the GPU's work. Every trace::Span is also an NVTX range while a profiler that injects NVTX
// (Nsight sets NVTX_INJECTION64_PATH) runs the process; otherwise nothing is done at all.
#pragma once

#include <string_view>

namespace lz::support::nvtx {

/// Whether a profiler collects NVTX ranges (read once).
bool active();
/// Opens a range named `name` on the calling thread; close it with pop() on the same thread.
void push(std::string_view name);
void pop();

}  // namespace lz::support::nvtx
