// NVTX in a build without the CUDA toolkit's headers: no profiler can ask for ranges.
#include "runtime/nvtx.h"

namespace lz::runtime::nvtx {

bool active() { return false; }
void push(std::string_view) {}
void pop() {}

}  // namespace lz::runtime::nvtx
