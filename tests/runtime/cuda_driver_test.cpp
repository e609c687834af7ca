// The CUDA driver loader: without a GPU the CUDA device is unavailable and every way of asking for
// it says why; the loader resolves every entry point it declares from a real driver library (the
// toolkit's stub, whose cuInit always fails); with a GPU the device describes itself.
#include <gtest/gtest.h>

#include <lazuli/lazuli.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "runtime/cuda/cublas_matmul.h"
#include "runtime/cuda/driver.h"
#include "tests/require_cuda.h"

namespace {

namespace cuda = lz::runtime::cuda;

/// The toolkit's stub libcuda.so (exports every driver entry point; cuInit reports
/// CUDA_ERROR_STUB_LIBRARY), or empty when no toolkit is installed.
std::string stub_driver_path() {
  std::vector<std::string> roots = {"/usr/local/cuda"};
  if (const char* home = std::getenv("CUDA_HOME")) roots.insert(roots.begin(), home);
  for (const std::string& root : roots) {
    const std::filesystem::path stub = std::filesystem::path(root) / "lib64/stubs/libcuda.so";
    if (std::filesystem::exists(stub)) return stub.string();
  }
  return {};
}

TEST(CudaDriverTest, WithoutAGpuEveryWayOfAskingSaysWhy) {
  if (lz::cuda::is_available()) GTEST_SKIP() << "this machine has a CUDA device";
  const std::string why = lz::cuda::unavailable_reason();
  EXPECT_FALSE(why.empty());
  EXPECT_EQ(lz::cuda::device_count(), 0);
  try {
    (void)lz::Device::cuda();
    FAIL() << "expected lz::Error";
  } catch (const lz::Error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("[Device::cuda] no CUDA device: " + why), std::string::npos) << message;
    EXPECT_NE(message.find("lz::Device::cpu()"), std::string::npos) << message;
  }
}

TEST(CudaDriverTest, TheLoaderResolvesEveryEntryPointOfARealDriverLibrary) {
  const std::string stub = stub_driver_path();
  if (stub.empty()) GTEST_SKIP() << "no CUDA toolkit: lib64/stubs/libcuda.so not found";
  std::string why;
  const std::unique_ptr<cuda::Driver> loaded = cuda::load_driver(stub, &why);
  EXPECT_EQ(loaded, nullptr) << "the stub driver cannot initialize";
  // Every symbol resolved (a missing one would be reported instead), and the failure of cuInit
  // is described through the library's own cuGetErrorName.
  EXPECT_NE(why.find("cuInit failed: CUDA_ERROR_STUB_LIBRARY"), std::string::npos) << why;
}

TEST(CudaDriverTest, CublasLoadsWithEveryEntryPointLazuliCalls) {
  if (stub_driver_path().empty()) GTEST_SKIP() << "no CUDA toolkit here";
  std::string why;
  EXPECT_TRUE(cuda::cublas_available(&why)) << why;
}

TEST(CudaDriverTest, AMissingLibraryIsReportedWithTheLoadersMessage) {
  std::string why;
  EXPECT_EQ(cuda::load_driver("liblazuli-no-such-driver.so", &why), nullptr);
  EXPECT_NE(why.find("cannot load liblazuli-no-such-driver.so"), std::string::npos) << why;
}

TEST(CudaDriverTest, WithAGpuTheDeviceDescribesItself) {
  if (!lz::cuda::is_available()) {
    LAZULI_SKIP_WITHOUT_CUDA("no CUDA device: " << lz::cuda::unavailable_reason());
  }
  EXPECT_TRUE(lz::cuda::unavailable_reason().empty());
  const cuda::DeviceProperties properties = cuda::device_properties(0);
  EXPECT_FALSE(properties.name.empty());
  EXPECT_GE(properties.compute_major, 5);
  EXPECT_GT(properties.multiprocessors, 0);
  EXPECT_GT(properties.memory_bytes, size_t{1} << 30);
  EXPECT_EQ(properties.architecture(), "sm_" + std::to_string(properties.compute_major) +
                                           std::to_string(properties.compute_minor));
  EXPECT_EQ(lz::Device::cuda(0).name(), "cuda:0");
  EXPECT_THROW((void)lz::Device::cuda(lz::cuda::device_count()), lz::Error);
}

}  // namespace
