// The JIT of a lazuli built without LLVM (LAZULI_WITH_LLVM=OFF): no kernel is compiled, so the
// runtime interprets each one and says why at LZ_LOG=info.
#include "codegen/cpu/jit.h"
#include "plan/unsupported_kernel.h"

namespace lz::codegen {

JitKernel build_kernel(const plan::Kernel&, plan::Sizes, const plan::WrittenOver&,
                       const std::string&, ObjectStore*, KernelDump*) {
  throw plan::UnsupportedKernel("this lazuli was built without LLVM (LAZULI_WITH_LLVM=OFF)");
}

int64_t loaded_kernel_count() { return 0; }

}  // namespace lz::codegen
