#include "suite.h"

namespace lazuli_bench {

std::vector<std::unique_ptr<Suite>> make_suites() {
  std::vector<std::unique_ptr<Suite>> suites;
  suites.push_back(make_fusion_suite());
  suites.push_back(make_async_suite());
  suites.push_back(make_cuda_suite());
  suites.push_back(make_train_suite());
  suites.push_back(make_gemm_suite());
  suites.push_back(make_memory_suite());
  suites.push_back(make_random_suite());
  return suites;
}

}  // namespace lazuli_bench
