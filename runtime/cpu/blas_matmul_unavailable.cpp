// The matmul of a lazuli built without OpenBLAS (LAZULI_WITH_BLAS=OFF): every matmul is left to
// the interpreter.
#include "runtime/cpu/blas_matmul.h"

namespace lz::runtime {

void load_matmul_libraries(const ir::Node&) {}

bool blas_matmul(const ir::Node&, const memory::Buffer&, bool, const memory::Buffer&, bool,
                 memory::Buffer&) {
  return false;
}

bool blas_matmul(const ir::Node&, const memory::Buffer&, bool, const memory::Buffer&, bool,
                 memory::Buffer*, const RowEpilogue&) {
  return false;
}

}  // namespace lz::runtime
