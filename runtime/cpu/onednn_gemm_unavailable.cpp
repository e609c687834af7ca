// The products of a lazuli built without oneDNN (LAZULI_WITH_ONEDNN=OFF): every one is left to
// OpenBLAS.
#include "runtime/cpu/onednn_gemm.h"

namespace lz::runtime {

void load_onednn() {}

bool onednn_takes(int64_t, int64_t, int64_t) { return false; }

uint64_t new_onednn_product() { return 0; }

bool onednn_sgemm(uint64_t, GemmOperand<float>, GemmOperand<float>, float*, int64_t, int64_t,
                  int64_t, int64_t) {
  return false;
}

}  // namespace lz::runtime
