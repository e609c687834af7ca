// The CUDA device layer on a GPU (skipped without one): a kernel compiled by NVRTC is loaded,
// launched on a lazuli stream's CUDA stream over memory from the caching allocator, and its
// result copied back equals the same arithmetic done here.
#include <gtest/gtest.h>

#include <lazuli/lazuli.h>

#include <string>
#include <vector>

#include "codegen/cuda/nvrtc.h"
#include "runtime/cuda/device.h"
#include "tests/require_cuda.h"

namespace {

namespace cuda = lz::runtime::cuda;

TEST(CudaDeviceTest, AnNvrtcKernelRunsOnAStreamOverAllocatorMemory) {
  if (!lz::cuda::is_available()) {
    LAZULI_SKIP_WITHOUT_CUDA("no CUDA device: " << lz::cuda::unavailable_reason());
  }
  std::string why;
  if (!lz::codegen::cuda::nvrtc_available(&why)) LAZULI_SKIP_WITHOUT_CUDA("no NVRTC: " << why);
  cuda::CudaDevice& device = cuda::cuda_device(0);
  const std::string arch = device.properties().architecture();
  const auto compiled = lz::codegen::cuda::compile_cuda(
      R"(extern "C" __global__ void scale_add(const float* x, float* y, long long n) {
           for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
                i += (long long)gridDim.x * blockDim.x) {
             y[i] = x[i] * 2.0f + 1.0f;
           }
         })",
      arch);
  const void* image = compiled.cubin.empty() ? static_cast<const void*>(compiled.ptx.c_str())
                                             : compiled.cubin.data();
  const cuda::CUfunction function = device.function(device.load_module(image), "scale_add");

  constexpr long long kCount = 1 << 20;
  std::vector<float> host(kCount);
  for (long long i = 0; i < kCount; ++i) host[i] = static_cast<float>(i % 1000) * 0.5f;
  const int64_t bytes = kCount * sizeof(float);
  cuda::CUdeviceptr x = device.allocator().allocate(bytes, 0, "test");
  cuda::CUdeviceptr y = device.allocator().allocate(bytes, 0, "test");
  const cuda::CUstream stream = device.stream(0);
  const cuda::DriverApi& api = device.driver().api;
  cuda::check(device.driver(), api.memcpy_htod_async(x, host.data(), bytes, stream), "test",
              "cuMemcpyHtoDAsync");
  long long count = kCount;
  void* parameters[] = {&x, &y, &count};
  device.launch(function, 256, 256, parameters, stream, "test");
  std::vector<float> result(kCount);
  cuda::check(device.driver(), api.memcpy_dtoh_async(result.data(), y, bytes, stream), "test",
              "cuMemcpyDtoHAsync");
  device.synchronize(stream, "test");
  for (long long i = 0; i < kCount; ++i) {
    ASSERT_EQ(result[i], host[i] * 2.0f + 1.0f) << "element " << i;
  }
  device.allocator().free(x, bytes, 0);
  device.allocator().free(y, bytes, 0);
  const cuda::CUdeviceptr reused = device.allocator().allocate(bytes, 0, "test");
  EXPECT_TRUE(reused == x || reused == y) << "a cached block of the same stream and size";
  device.allocator().free(reused, bytes, 0);
}

}  // namespace
