// CUDA tensors handed to other libraries and taken from them without a copy
// (lazuli/cuda_interop.h), skipped without a GPU. Exported elements are read back through the
// driver, and borrowed memory is filled and read through it, so the expectations do not depend
// on the functions under test.
#include <gtest/gtest.h>

#include <lazuli/lazuli.h>

#include <atomic>
#include <string>
#include <vector>

#include "runtime/cuda/device.h"
#include "tests/cuda_test.h"

namespace {

namespace runtime_cuda = lz::runtime::cuda;

class CudaInteropTest : public lz::test::CudaTest {
 protected:
  /// `count` floats at device address `address` of CUDA device 0, copied to the host on a
  /// stream no lazuli kernel of these tests uses, which waits for nothing.
  static std::vector<float> read_device(uint64_t address, size_t count) {
    runtime_cuda::CudaDevice& device = runtime_cuda::cuda_device(0);
    device.make_current();
    std::vector<float> values(count);
    const runtime_cuda::DriverApi& api = device.driver().api;
    runtime_cuda::check(device.driver(),
                        api.memcpy_dtoh_async(values.data(), address, count * sizeof(float),
                                              device.stream(kOtherStream)),
                        "test", "cuMemcpyDtoHAsync");
    device.synchronize(device.stream(kOtherStream), "test");
    return values;
  }

  /// Device memory of CUDA device 0 holding `values`, written before the call returns.
  static runtime_cuda::CUdeviceptr device_copy_of(const std::vector<float>& values) {
    runtime_cuda::CudaDevice& device = runtime_cuda::cuda_device(0);
    device.make_current();
    runtime_cuda::CUdeviceptr address = 0;
    const runtime_cuda::DriverApi& api = device.driver().api;
    runtime_cuda::check(device.driver(), api.mem_alloc(&address, values.size() * sizeof(float)),
                        "test", "cuMemAlloc");
    runtime_cuda::check(device.driver(),
                        api.memcpy_htod_async(address, values.data(), values.size() * sizeof(float),
                                              device.stream(kOtherStream)),
                        "test", "cuMemcpyHtoDAsync");
    device.synchronize(device.stream(kOtherStream), "test");
    return address;
  }

  static constexpr int kOtherStream = 5;
};

TEST_F(CudaInteropTest, ExportedElementsAreTheComputedTensorOnItsDevice) {
  const lz::Tensor x = lz::arange(0, 6, 1, lz::float32).to(lz::Device::cuda(0)) * 2.0f;
  const lz::cuda::DeviceElements elements = lz::cuda::device_elements(x);
  EXPECT_EQ(elements.device, 0);
  ASSERT_NE(elements.owner, nullptr);
  EXPECT_EQ(read_device(elements.address, 6), (std::vector<float>{0, 2, 4, 6, 8, 10}));
  // A tensor made from host data reaches the device at its export.
  const lz::Tensor host_made =
      lz::from_vector(std::vector<float>{1.5f, -2}, {2}, lz::Device::cuda(0));
  EXPECT_EQ(read_device(lz::cuda::device_elements(host_made).address, 2),
            (std::vector<float>{1.5f, -2}));
}

TEST_F(CudaInteropTest, AnExportedCopyIsMemoryOfItsOwnThatTheCallerMayWrite) {
  const lz::Tensor x = lz::arange(0, 6, 1, lz::float32).to(lz::Device::cuda(0)) * 2.0f;
  const lz::cuda::DeviceElements shared = lz::cuda::device_elements(x);
  const lz::cuda::DeviceElements copied = lz::cuda::device_elements_copy(x);
  ASSERT_NE(copied.owner, nullptr);
  EXPECT_NE(copied.address, shared.address);
  const std::vector<float> expected{0, 2, 4, 6, 8, 10};
  EXPECT_EQ(read_device(copied.address, 6), expected);
  // The caller writes its copy; the tensor and its own memory keep their values.
  runtime_cuda::CudaDevice& device = runtime_cuda::cuda_device(0);
  device.make_current();
  runtime_cuda::check(device.driver(),
                      device.driver().api.memset_d8_async(copied.address, 0, 6 * sizeof(float),
                                                          device.stream(kOtherStream)),
                      "test", "cuMemsetD8Async");
  device.synchronize(device.stream(kOtherStream), "test");
  EXPECT_EQ(read_device(copied.address, 6), std::vector<float>(6, 0.0f));
  EXPECT_EQ(read_device(shared.address, 6), expected);
  EXPECT_EQ(x.to_vector<float>(), expected);
}

TEST_F(CudaInteropTest, BorrowedElementsAreReadInPlaceAndReleasedAfterTheLastRead) {
  const std::vector<float> values{3, 1, 4, 1, 5, 9};
  const runtime_cuda::CUdeviceptr address = device_copy_of(values);
  runtime_cuda::CudaDevice& device = runtime_cuda::cuda_device(0);
  const runtime_cuda::DriverApi& api = device.driver().api;
  // The owner takes its memory back by overwriting it at once: a kernel still queued to read it
  // would then read zeros.
  std::atomic<int> released{0};
  const auto take_back = [&] {
    device.make_current();
    (void)api.memset_d8_async(address, 0, values.size() * sizeof(float),
                              device.stream(kOtherStream));
    device.synchronize(device.stream(kOtherStream), "test");
    released.fetch_add(1);
  };
  lz::Tensor doubled;
  {
    const lz::Tensor borrowed =
        lz::cuda::borrow_device_elements(address, lz::float32, {2, 3}, 0, take_back);
    EXPECT_EQ(borrowed.device(), lz::Device::cuda(0));
    EXPECT_EQ(lz::cuda::device_elements(borrowed).address, address);  // no copy either way
    doubled = borrowed * 2.0f;
    doubled.eval_async();  // queued; the last handle to the borrowed tensor goes next
  }
  EXPECT_EQ(doubled.to_vector<float>(), (std::vector<float>{6, 2, 8, 2, 10, 18}));
  doubled = lz::Tensor();
  lz::waitall();
  EXPECT_EQ(released.load(), 1);
  (void)api.mem_free(address);
}

TEST_F(CudaInteropTest, MisalignedElementsAreCopiedOnceAndReleasedAtOnce) {
  const std::vector<float> values{7, 3, 4, 1, 5};
  const runtime_cuda::CUdeviceptr address = device_copy_of(values);
  std::atomic<int> released{0};
  // Elements 1..4: 4 bytes past a 256-byte aligned allocation, as a slice of another array.
  const lz::Tensor slice = lz::cuda::borrow_device_elements(
      address + sizeof(float), lz::float32, {4}, 0, [&released] { released.fetch_add(1); });
  EXPECT_EQ(released.load(), 1);
  EXPECT_NE(lz::cuda::device_elements(slice).address, address + sizeof(float));
  EXPECT_EQ((slice + 1.0f).to_vector<float>(), (std::vector<float>{4, 5, 2, 6}));
  (void)runtime_cuda::cuda_device(0).driver().api.mem_free(address);
}

TEST_F(CudaInteropTest, ExportingAHostTensorOrBorrowingANullAddressNamesTheCall) {
  try {
    (void)lz::cuda::device_elements(lz::ones({2}).to(lz::Device::cpu()));
    FAIL() << "expected an error for a CPU tensor";
  } catch (const lz::Error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("[device_elements]"), std::string::npos) << message;
    EXPECT_NE(message.find("cpu:0"), std::string::npos) << message;
    EXPECT_NE(message.find("cuda_interop_test.cpp"), std::string::npos) << message;
  }
  int released = 0;
  EXPECT_THROW(
      (void)lz::cuda::borrow_device_elements(0, lz::float32, {4}, 0, [&released] { ++released; }),
      lz::Error);
  EXPECT_EQ(released, 1);  // released on the failure too, once
}

}  // namespace
