// NVTX ranges, so that Nsight Systems shows lazuli's launches, compiles and kernel runs next to
// the GPU's work. Every trace::Span is also an NVTX range while a profiler that injects NVTX
// (Nsight sets NVTX_INJECTION64_PATH) runs the process; otherwise nothing is done at all.
#pragma once

#include <string_view>

namespace lz::support::nvtx {

namespace detail {
extern const bool injected;  // NVTX_INJECTION64_PATH was set at load
}

/// Whether a profiler collects NVTX ranges (read at load). Inline: every Span asks.
inline bool active() { return detail::injected; }
/// Opens a range named `name` on the calling thread; close it with pop() on the same thread.
void push(std::string_view name);
void pop();

}  // namespace lz::support::nvtx
