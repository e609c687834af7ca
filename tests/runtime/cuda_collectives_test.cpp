// Collectives of CUDA tensors through NCCL on one GPU (skipped without one): a process group of
// this process alone, whose host transport is a copy, so that no MPI is needed and the GPU check
// runs NCCL's single-GPU communicator. The collectives' results are computed here by hand.
#include <gtest/gtest.h>

#include <lazuli/lazuli.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "runtime/collectives.h"
#include "runtime/cuda/nccl.h"
#include "tests/cuda_test.h"

namespace {

using lz::Tensor;
using lz::dist::ReduceOp;

/// The process group of one rank: exchanging and moving host bytes are copies.
class OneRank final : public lz::runtime::Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string name() const override { return "one rank"; }
  bool all_gather_bytes(std::span<const std::byte> mine, std::span<std::byte> all, Deadline,
                        std::shared_ptr<const void>) override {
    std::memcpy(all.data(), mine.data(), mine.size());
    return true;
  }
  bool move(const lz::ir::Node&, const lz::memory::Buffer& input, lz::memory::Buffer& output,
            Deadline, std::shared_ptr<const void>) override {
    std::memcpy(output.data(), input.data(), static_cast<size_t>(input.bytes()));
    return true;
  }
};

// Needs no GPU: NCCL makes its unique id on the host. Here that is the CUDA toolkit's own
// libnccl.so.2, whose entry points lazuli resolves by name and declares by nccl.h's ABI.
TEST(NcclLoaderTest, NcclLoadsWithEveryEntryPointAndMakesUniqueIds) {
  std::string why;
  if (!lz::runtime::cuda::nccl_available(&why)) LAZULI_SKIP_WITHOUT_CUDA("no NCCL: " << why);
  const lz::ir::NodePtr node = lz::ir::new_node();
  node->op = lz::ir::Op::AllSum;
  const lz::runtime::cuda::NcclUniqueId first = lz::runtime::cuda::make_nccl_unique_id(*node);
  const lz::runtime::cuda::NcclUniqueId second = lz::runtime::cuda::make_nccl_unique_id(*node);
  EXPECT_NE(std::memcmp(first.internal, second.internal, sizeof first.internal), 0);
}

class CudaCollectivesTest : public lz::test::CudaTest {
 protected:
  void SetUp() override {
    CudaTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    std::string why;
    if (!lz::runtime::cuda::nccl_available(&why)) LAZULI_SKIP_WITHOUT_CUDA("no NCCL: " << why);
    lz::runtime::install_communicator(std::make_shared<OneRank>(), std::chrono::seconds(60));
  }
  void TearDown() override {
    if (lz::dist::is_initialized()) lz::runtime::install_communicator(nullptr, {});
  }
};

TEST_F(CudaCollectivesTest, EachCollectiveOfOneRankGivesItsOperandOnTheGpu) {
  const lz::Device gpu = lz::Device::cuda(0);
  // A pending operand, computed on the GPU by the launch that runs the collectives.
  const Tensor x = lz::arange(0, 6, 1, lz::float32).to(gpu) * 3.0f;
  const std::vector<float> values{0, 3, 6, 9, 12, 15};
  for (const ReduceOp op : {ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max, ReduceOp::Min}) {
    const Tensor reduced = lz::dist::all_reduce(x, op);
    EXPECT_EQ(reduced.device(), gpu);
    EXPECT_EQ(reduced.to_vector<float>(), values) << static_cast<int>(op);
  }
  EXPECT_EQ(lz::dist::all_gather(x.reshape({2, 3})).shape(), (lz::Shape{2, 3}));
  EXPECT_EQ(lz::dist::all_gather(x).to_vector<float>(), values);
  EXPECT_EQ(lz::dist::reduce_scatter(x).to_vector<float>(), values);
  EXPECT_EQ(lz::dist::broadcast(x, 0).to_vector<float>(), values);
  const Tensor flags = lz::from_vector(std::vector<bool>{true, false}, {2}).to(gpu);
  EXPECT_EQ(lz::dist::all_reduce(flags, ReduceOp::Max).to_vector<bool>(),
            (std::vector<bool>{true, false}));
  const Tensor counts = lz::from_vector(std::vector<int64_t>{-4, 1LL << 40}, {2}).to(gpu);
  EXPECT_EQ(lz::dist::all_reduce(counts).to_vector<int64_t>(),
            (std::vector<int64_t>{-4, 1LL << 40}));
}

TEST_F(CudaCollectivesTest, KernelsReadTheResultAndTheStatisticsCountIt) {
  const lz::Device gpu = lz::Device::cuda(0);
  const int64_t before = lz::stats().collectives;
  const Tensor x = lz::arange(0, 4, 1, lz::float64).to(gpu);
  // Two collectives chained, then a kernel reading both: 2 * x + x.
  const Tensor once = lz::dist::all_reduce(x);
  const Tensor y = lz::dist::all_reduce(once) * 2.0 + once;
  EXPECT_EQ(y.to_vector<double>(), (std::vector<double>{0, 3, 6, 9}));
  EXPECT_EQ(lz::stats().collectives - before, 2);
}

TEST_F(CudaCollectivesTest, ARanksCollectivesStayOnTheGpuOfItsFirst) {
  if (lz::cuda::device_count() < 2) GTEST_SKIP() << "one CUDA device: nothing to mix";
  (void)lz::dist::all_reduce(lz::ones({2}).to(lz::Device::cuda(0))).to_vector<float>();
  try {
    (void)lz::dist::all_reduce(lz::ones({2}).to(lz::Device::cuda(1)));
    FAIL() << "expected a collective on a second GPU to be refused";
  } catch (const lz::Error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("[all_reduce]"), std::string::npos) << message;
    EXPECT_NE(message.find("run on cuda:0"), std::string::npos) << message;
    EXPECT_NE(message.find("cuda_collectives_test.cpp"), std::string::npos) << message;
  }
}

}  // namespace
