// NVTX through the CUDA toolkit's header-only NVTX 3, which loads the profiler's injection
// library itself; built only where the toolkit's headers are (see runtime/CMakeLists.txt).
#include "support/nvtx.h"

#include <nvtx3/nvToolsExt.h>

#include <cstdlib>
#include <string>

namespace lz::support::nvtx {

// Read when the library loads: a Span in a static initializer that runs before this one opens no
// range, which no profile misses.
const bool detail::injected = std::getenv("NVTX_INJECTION64_PATH") != nullptr;

void push(std::string_view name) { nvtxRangePushA(std::string(name).c_str()); }

void pop() { nvtxRangePop(); }

}  // namespace lz::support::nvtx
