// Buffers whose elements live in a device's memory (memory/buffer.h, memory/device_memory.h):
// a blocking point copies them to the host once, and a kernel on another device reads them
// through one copy per device. The "device" here is host memory behind the DeviceMemory
// interface, which counts the copies; runtime/cuda/ implements it for CUDA.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "memory/buffer.h"
#include "memory/event.h"

namespace {

using lz::float32;
using lz::memory::Buffer;
using lz::memory::DeviceMemory;
using lz::memory::Event;

/// Elements "on device `index`": a host array standing in for device memory.
class HostBackedMemory final : public DeviceMemory {
 public:
  HostBackedMemory(int index, const void* elements, int64_t bytes, std::atomic<int>& reads)
      : index_(index), elements_(static_cast<size_t>(bytes)), reads_(reads) {
    std::memcpy(elements_.data(), elements, static_cast<size_t>(bytes));
  }
  uint64_t address() const override { return reinterpret_cast<uint64_t>(elements_.data()); }
  int device_index() const override { return index_; }
  void copy_to_host(void* host, int64_t bytes) const override {
    reads_.fetch_add(1);
    std::memcpy(host, elements_.data(), static_cast<size_t>(bytes));
  }
  void wait() const override {}  // written when made
  bool is_written() const override { return true; }
  const float* elements() const { return reinterpret_cast<const float*>(elements_.data()); }

 private:
  const int index_;
  std::vector<char> elements_;
  std::atomic<int>& reads_;
};

std::shared_ptr<Buffer> host_buffer(std::initializer_list<float> values) {
  std::shared_ptr<Buffer> buffer = Buffer::allocate(float32, static_cast<int64_t>(values.size()));
  std::copy(values.begin(), values.end(), buffer->data_as<float>());
  return buffer;
}

TEST(DeviceBufferTest, HostCopiesDeviceElementsOnceAndKeepsThem) {
  std::atomic<int> reads{0};
  const float values[] = {1.5f, -2.0f, 3.25f};
  std::shared_ptr<Buffer> buffer = Buffer::on_device(
      float32, 3, std::make_unique<HostBackedMemory>(0, values, sizeof(values), reads));
  ASSERT_NE(buffer->device_memory(), nullptr);
  EXPECT_EQ(buffer->data(), nullptr) << "a device buffer has no host elements of its own";
  const Buffer& host = buffer->host();
  EXPECT_EQ(host.data_as<float>()[0], 1.5f);
  EXPECT_EQ(host.data_as<float>()[2], 3.25f);
  EXPECT_EQ(&buffer->host(), &host);
  EXPECT_EQ(reads.load(), 1);
}

TEST(DeviceBufferTest, DeviceCopyIsMadeOncePerDevice) {
  std::atomic<int> reads{0};
  int copies = 0;
  std::shared_ptr<Buffer> buffer = host_buffer({4.0f, 5.0f});
  const Buffer::DeviceCopier copier = [&](const Buffer& host) -> std::unique_ptr<DeviceMemory> {
    ++copies;
    return std::make_unique<HostBackedMemory>(copies, host.data(), host.bytes(), reads);
  };
  const DeviceMemory& on_zero = buffer->device_copy(0, [&](const Buffer& host) {
    ++copies;
    return std::make_unique<HostBackedMemory>(0, host.data(), host.bytes(), reads);
  });
  EXPECT_EQ(&buffer->device_copy(0, copier), &on_zero) << "copied again for the same device";
  EXPECT_EQ(copies, 1);
  EXPECT_EQ(static_cast<const HostBackedMemory&>(on_zero).elements()[1], 5.0f);
  const DeviceMemory& on_two = buffer->device_copy(2, [&](const Buffer& host) {
    ++copies;
    return std::make_unique<HostBackedMemory>(2, host.data(), host.bytes(), reads);
  });
  EXPECT_NE(&on_two, &on_zero);
  EXPECT_EQ(on_two.device_index(), 2);
  EXPECT_EQ(copies, 2);
}

TEST(DeviceBufferTest, ConcurrentFirstReadersShareOneCopy) {
  std::atomic<int> reads{0};
  std::atomic<int> copies{0};
  std::shared_ptr<Buffer> buffer = host_buffer({1.0f, 2.0f, 3.0f, 4.0f});
  std::vector<const DeviceMemory*> seen(8);
  std::vector<std::thread> readers;
  for (size_t t = 0; t < seen.size(); ++t) {
    readers.emplace_back([&, t] {
      seen[t] = &buffer->device_copy(1, [&](const Buffer& host) {
        copies.fetch_add(1);
        std::this_thread::yield();  // let the other readers arrive while the copy is made
        return std::make_unique<HostBackedMemory>(1, host.data(), host.bytes(), reads);
      });
    });
  }
  for (std::thread& reader : readers) reader.join();
  EXPECT_EQ(copies.load(), 1);
  for (const DeviceMemory* memory : seen) EXPECT_EQ(memory, seen[0]);
}

TEST(DeviceBufferTest, APromiseSharesTheCopiesOfItsComputedBuffer) {
  std::atomic<int> reads{0};
  int copies = 0;
  const auto copier = [&](const Buffer& host) -> std::unique_ptr<DeviceMemory> {
    ++copies;
    return std::make_unique<HostBackedMemory>(0, host.data(), host.bytes(), reads);
  };
  auto written = std::make_shared<Event>();
  std::shared_ptr<Buffer> promise = Buffer::promise(float32, 2, written);
  std::shared_ptr<Buffer> computed = host_buffer({7.0f, 8.0f});
  promise->fulfil(computed);
  written->set();
  const DeviceMemory& through_promise = promise->device_copy(0, copier);
  EXPECT_EQ(&computed->device_copy(0, copier), &through_promise);
  EXPECT_EQ(copies, 1);
}

TEST(DeviceBufferTest, ADeviceBufferIsCopiedToAnotherDeviceThroughTheHost) {
  std::atomic<int> reads{0};
  const float values[] = {9.0f, -1.0f};
  std::shared_ptr<Buffer> buffer = Buffer::on_device(
      float32, 2, std::make_unique<HostBackedMemory>(0, values, sizeof(values), reads));
  const DeviceMemory& on_one = buffer->device_copy(1, [&](const Buffer& host) {
    return std::make_unique<HostBackedMemory>(1, host.data(), host.bytes(), reads);
  });
  EXPECT_EQ(static_cast<const HostBackedMemory&>(on_one).elements()[0], 9.0f);
  EXPECT_EQ(reads.load(), 1);
}

}  // namespace
