// Naming devices (Device::parse, as LZ_DEVICE takes them) and the default device: the process's
// (set_default_device), overridden on a thread by DeviceScope.
#include <gtest/gtest.h>

#include <lazuli/lazuli.h>

#include <string>

namespace {

TEST(DeviceTest, ParseReadsWhatNameWrites) {
  EXPECT_EQ(lz::Device::parse("cpu"), lz::Device::cpu());
  EXPECT_EQ(lz::Device::parse("cpu:3"), lz::Device::cpu(3));
  EXPECT_EQ(lz::Device::parse(lz::Device::cpu(63).name()), lz::Device::cpu(63));
}

TEST(DeviceTest, ParseRejectsWhatIsNotADeviceSayingWhatIs) {
  for (const char* text : {"gpu", "cpu:", "cpu:x", "cpu:1x", "CPU", ""}) {
    try {
      (void)lz::Device::parse(text);
      FAIL() << "expected lz::Error for '" << text << "'";
    } catch (const lz::Error& error) {
      EXPECT_EQ(std::string(error.what()), "[Device::parse] '" + std::string(text) +
                                               "' is not a device; expected cpu, cpu:N, cuda or "
                                               "cuda:N");
    }
  }
  EXPECT_THROW((void)lz::Device::parse("cpu:64"), lz::Error) << "out of range, as cpu(64)";
}

TEST(DeviceTest, ParsingCudaWithoutAGpuSaysWhy) {
  if (lz::cuda::is_available()) GTEST_SKIP() << "this machine has a CUDA device";
  try {
    (void)lz::Device::parse("cuda:0");
    FAIL() << "expected lz::Error";
  } catch (const lz::Error& error) {
    EXPECT_NE(std::string(error.what()).find(lz::cuda::unavailable_reason()), std::string::npos)
        << error.what();
  }
}

TEST(DeviceTest, TheProcessDefaultAppliesWhereNoScopeOverridesIt) {
  lz::set_default_device(lz::Device::cpu(1));
  EXPECT_EQ(lz::ones({2}).device(), lz::Device::cpu(1));
  {
    lz::DeviceScope scope(lz::Device::cpu(2));
    EXPECT_EQ(lz::ones({2}).device(), lz::Device::cpu(2));
  }
  EXPECT_EQ(lz::default_device(), lz::Device::cpu(1)) << "the scope restored the process default";
  lz::set_default_device(lz::Device::cpu());
  EXPECT_EQ((lz::ones({2}) + 1).to_vector<float>(), (std::vector<float>{2, 2}));
}

}  // namespace
