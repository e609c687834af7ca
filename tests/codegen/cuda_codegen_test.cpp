// The CUDA code generator up to the cubin, without a GPU: every op and dtype the CPU JIT tests
// (cpu_jit_test.cpp) and the fuzzer's random graphs become kernels whose source NVRTC compiles
// for sm_90 with every entry point in the cubin; NVRTC's failures carry its log and the source;
// the source depends only on what kernel_key holds. Running the code needs a GPU
// (tools/gpu-check.sh).
//
// NVRTC takes about 100 ms per compilation whatever its size, so each test compiles its kernels
// together: one translation unit of many kernels with distinct names.
#include <gtest/gtest.h>

#include <lazuli/lazuli.h>
#include <algorithm>
#include <cmath>
#include <functional>
#include <future>
#include <string>
#include <vector>

#include "codegen/cuda/nvrtc.h"
#include "codegen/cuda/preamble.h"
#include "codegen/cuda/source.h"
#include "ir/graph.h"
#include "passes/pass.h"
#include "plan/fusion_plan.h"
#include "plan/kernel_signature.h"
#include "plan/unsupported_kernel.h"
#include "tests/codegen/cuda_test_kernels.h"
#include "tests/codegen/real_nvrtc.h"
#include "tests/passes/graph_generator.h"

namespace {

using lz::codegen::cuda::CudaKernelSource;
using lz::codegen::test::data;
using lz::codegen::test::kernels_of;
using lz::codegen::test::kernels_of_graph;
using lz::codegen::test::sample;

constexpr const char* kArch = "sm_90";

#define SKIP_WITHOUT_NVRTC()                                                 \
  do {                                                                       \
    std::string why;                                                         \
    if (!lz::codegen::test::real_nvrtc_available(&why)) GTEST_SKIP() << why; \
  } while (false)

/// Kernels generated into one translation unit, compiled together, each entry looked up in the
/// cubin by name.
class KernelBatch {
 public:
  /// Generates every compilable kernel of `kernels`; `what` names them in failures.
  void add(const std::vector<lz::plan::Kernel>& kernels, const std::string& what) {
    for (const lz::plan::Kernel& kernel : kernels) {
      if (!lz::codegen::cuda::is_cuda_compilable(kernel)) continue;
      const std::string name = "lz_k" + std::to_string(sources_.size());
      try {
        sources_.push_back(lz::codegen::cuda::generate_cuda_source(kernel, name));
        labels_.push_back(what);
      } catch (const lz::plan::UnsupportedKernel& unsupported) {
        unsupported_.push_back(what + ": " + unsupported.what());
      } catch (const lz::Error& error) {
        ADD_FAILURE() << what << ": generation failed: " << error.what();
      }
    }
  }
  void add(const std::vector<lz::Tensor>& outputs, const std::string& what) {
    add(kernels_of(outputs), what);
  }

  int kernels() const { return static_cast<int>(sources_.size()); }
  /// Kernels the generator refused as structures the CPU lowering does not take either.
  const std::vector<std::string>& unsupported() const { return unsupported_; }

  /// Compiles the batch, in two translation units compiled at once; every entry must be in the
  /// cubin and in the PTX.
  void compile_and_check() {
    ASSERT_FALSE(sources_.empty()) << "no kernel to compile";
    constexpr size_t kParts = 2;
    const size_t per_part = (sources_.size() + kParts - 1) / kParts;
    std::vector<std::future<std::string>> parts;
    for (size_t begin = 0; begin < sources_.size(); begin += per_part) {
      const size_t end = std::min(begin + per_part, sources_.size());
      parts.push_back(std::async(
          std::launch::async, [this, begin, end] { return compile_and_check_part(begin, end); }));
    }
    for (std::future<std::string>& part : parts) {
      const std::string failures = part.get();
      EXPECT_TRUE(failures.empty()) << failures;
    }
  }

 private:
  /// Compiles kernels [begin, end) as one translation unit; returns what went wrong.
  std::string compile_and_check_part(size_t begin, size_t end) const {
    std::string source(lz::codegen::cuda::device_preamble());
    for (size_t k = begin; k < end; ++k) source += "\n" + sources_[k].definitions;
    lz::codegen::cuda::CompiledCuda compiled;
    try {
      compiled = lz::codegen::cuda::compile_cuda(source, kArch, /*want_ptx=*/true);
    } catch (const lz::Error& error) {
      return error.what();  // NVRTC's log and the numbered source
    }
    if (compiled.target != kArch || compiled.cubin.empty()) {
      return "no cubin for " + std::string(kArch) + " (target " + compiled.target + ")";
    }
    const std::string cubin(compiled.cubin.begin(), compiled.cubin.end());
    std::string failures;
    for (size_t k = begin; k < end; ++k) {
      if (sources_[k].entries.empty()) failures += labels_[k] + ": no entry\n";
      for (const lz::codegen::cuda::CudaEntry& entry : sources_[k].entries) {
        if (cubin.find(entry.symbol + '\0') == std::string::npos ||
            compiled.ptx.find(".entry " + entry.symbol + "(") == std::string::npos) {
          failures += entry.symbol + " (" + labels_[k] + ") is not in the cubin or the PTX:\n" +
                      sources_[k].definitions;
        }
      }
    }
    return failures;
  }

  std::vector<CudaKernelSource> sources_;
  std::vector<std::string> labels_;
  std::vector<std::string> unsupported_;
};

TEST(CudaCodegenTest, EveryElementwiseOpAndDtypeCompiles) {
  SKIP_WITHOUT_NVRTC();
  KernelBatch batch;
  for (lz::DType dtype : {lz::float32, lz::float64, lz::int32, lz::int64}) {
    // Data read from buffers: generated leaves (ViewsNaNsTailsAndGeneratedLeavesCompile) would
    // inline their random numbers into every kernel and multiply the compile time.
    const auto a = [&] { return data({4, 33}, dtype); };
    const auto b = [&] { return data({33}, dtype); };
    const std::string name = lz::dtype_name(dtype);
    batch.add({a() + b(), a() - b(), a() * b()}, "add sub mul " + name);
    batch.add({lz::maximum(a(), b()), lz::minimum(a(), b())}, "maximum minimum " + name);
    batch.add({-a(), lz::abs(a()), lz::square(a()), lz::relu(a())}, "neg abs square relu " + name);
    batch.add({a() < b(), a() >= b(), a() == b(), a() != b(), a() > b(), a() <= b()},
              "comparisons " + name);
    batch.add({lz::where(a() > b(), a(), b())}, "where " + name);
    for (lz::DType to : lz::kAllDTypes) {
      batch.add({a().astype(to)}, "astype " + name + " to " + lz::dtype_name(to));
    }
    if (lz::is_integer(dtype)) {
      batch.add({lz::pow(a(), lz::minimum(lz::abs(b()), 7))}, "pow " + name);
    } else {
      batch.add({a() / b(), lz::pow(lz::abs(a()), b())}, "div pow " + name);
      for (auto f :
           {&lz::exp, &lz::sqrt, &lz::rsqrt, &lz::sin, &lz::cos, &lz::tanh, &lz::sigmoid}) {
        batch.add({f(a(), std::source_location::current())}, "unary " + name);
      }
      batch.add({lz::log(lz::abs(a()))}, "log " + name);
    }
  }
  const lz::Tensor flags = data({4, 33}, lz::bool_);
  batch.add({lz::maximum(flags, flags > flags), lz::minimum(flags, flags == flags)},
            "bool max/min");
  batch.add({lz::where(flags, flags, flags == flags)}, "bool where");
  for (lz::DType to : lz::kAllDTypes) {
    batch.add({flags.astype(to)}, std::string("astype bool to ") + lz::dtype_name(to));
  }
  batch.compile_and_check();
}

TEST(CudaCodegenTest, ReductionsOverEveryAxisAndDtypeCompile) {
  SKIP_WITHOUT_NVRTC();
  KernelBatch batch;
  const lz::Shape shape{3, 5, 17};
  const std::vector<std::vector<int>> every_axes{{0},    {1},    {2},       {0, 1},
                                                 {0, 2}, {1, 2}, {0, 1, 2}, {-1}};
  for (lz::DType dtype : {lz::float32, lz::float64, lz::int32, lz::int64, lz::bool_}) {
    const std::string name = lz::dtype_name(dtype);
    for (const std::vector<int>& axes : every_axes) {
      for (bool keepdims : {false, true}) {
        // keepdims changes only the results' shape, which the code never reads: twice is enough.
        if (keepdims && axes.size() != 2) continue;
        const std::string what = name + " axes " + std::to_string(axes.size()) + "," +
                                 std::to_string(axes[0]) + (keepdims ? " keepdims" : "");
        if (dtype != lz::bool_)
          batch.add({lz::sum(data(shape, dtype), axes, keepdims)}, "sum " + what);
        batch.add({lz::max(data(shape, dtype), axes, keepdims)}, "max " + what);
        batch.add({lz::min(data(shape, dtype), axes, keepdims)}, "min " + what);
      }
    }
    for (int axis : {0, 1, 2}) {
      batch.add({lz::argmax(data(shape, dtype), axis)}, "argmax " + name);
    }
  }
  // Long reduced extents: a block per kept position (the short ones above: a thread each).
  for (lz::DType dtype : {lz::float32, lz::float64, lz::int32, lz::int64}) {
    const lz::Tensor x = data({6, 300}, dtype);
    batch.add({lz::sum(x, {1}), lz::max(x, {1}), lz::min(x, {1}), lz::argmax(x, 1)},
              std::string("long rows ") + lz::dtype_name(dtype));
    batch.add({lz::argmax(data({300, 6}, dtype), 0)}, "long argmax column");
  }
  batch.add({lz::max(data({4, 100}, lz::bool_), {1}), lz::argmax(data({4, 100}, lz::bool_), 1)},
            "long bool rows");
  batch.compile_and_check();
}

TEST(CudaCodegenTest, ReductionsToOneValueSplitIntoPartialAndFinishEntries) {
  SKIP_WITHOUT_NVRTC();
  KernelBatch batch;
  for (int64_t n : {int64_t{1000}, int64_t{200003}}) {
    const std::string what = std::to_string(n) + " elements";
    for (lz::DType dtype : {lz::float32, lz::float64, lz::int32, lz::int64}) {
      const lz::Tensor x = data({n}, dtype);
      batch.add({lz::sum(x)}, "sum " + what);
      batch.add({lz::max(x)}, "max " + what);
      batch.add({lz::min(x * 2, {}, true)}, "min " + what);
      batch.add({lz::argmax(x, 0)}, "argmax " + what);
    }
    const lz::Tensor y = lz::reshape(data({n}, lz::float32), {n, 1});
    batch.add({y - lz::mean(y)}, "centre " + what);
    batch.add({lz::sum(y) * 2.0 + lz::max(y)}, "two results " + what);
    batch.add({lz::max(data({n}, lz::bool_)), lz::min(data({n}, lz::bool_))}, "any all " + what);
    batch.add({lz::softmax(lz::reshape(y, {n}), 0)}, "softmax " + what);
  }
  // The big ones did split: Partial, Finish and (for y - mean(y)) Broadcast entries.
  const lz::Tensor big = lz::reshape(data({200003}, lz::float32), {200003, 1});
  int partial = 0, finish = 0, broadcast = 0;
  for (const lz::plan::Kernel& kernel : kernels_of({big - lz::mean(big)})) {
    for (const auto& entry : lz::codegen::cuda::generate_cuda_source(kernel, "k").entries) {
      partial += entry.kind == lz::codegen::cuda::CudaEntry::Kind::Partial;
      finish += entry.kind == lz::codegen::cuda::CudaEntry::Kind::Finish;
      broadcast += entry.kind == lz::codegen::cuda::CudaEntry::Kind::Broadcast;
    }
  }
  EXPECT_EQ(partial, 1);
  EXPECT_EQ(finish, 1);
  EXPECT_EQ(broadcast, 1);
  batch.compile_and_check();
}

TEST(CudaCodegenTest, ViewsNaNsTailsAndGeneratedLeavesCompile) {
  SKIP_WITHOUT_NVRTC();
  KernelBatch batch;
  const auto x = [] { return data({6, 8, 5}, lz::float32); };
  batch.add({lz::transpose(x(), {2, 0, 1}) * 2.0 + 1.0}, "transpose");
  batch.add({lz::exp(lz::slice(x(), {1, 0, 4}, {6, 8, 0}, {2, 3, -2}))}, "slice");
  batch.add(
      {lz::reshape(lz::transpose(x()), {5, 48}) - lz::reshape(lz::sum(x(), {0, 1}, false), {5, 1})},
      "reshape of transpose minus sum");
  batch.add({lz::concatenate({x(), x() * 2.0, lz::zeros({6, 1, 5})}, 1) + 1.0}, "concatenate");
  batch.add({lz::broadcast_to(lz::arange(0, 5), {4, 5}) * lz::expand_dims(lz::arange(0, 4), 1)},
            "broadcast of aranges");
  batch.add({lz::softmax(x(), 1)}, "softmax over a middle axis");
  batch.add({x() - lz::mean(x(), {0}, true)}, "centre over axis 0");
  const lz::Tensor nans = lz::from_vector(
      std::vector<float>{1, std::nanf(""), 3, -2, 5, 4, std::nanf(""), 0, -1, 7, 7, 2}, {3, 4});
  batch.add({lz::max(nans, {1}), lz::min(nans, {0}), lz::argmax(nans, 1), lz::relu(nans)}, "NaNs");
  for (int64_t n : {0, 1, 2, 3, 7, 9, 17, 1000}) {
    const std::string what = "n=" + std::to_string(n);
    const lz::Tensor a = data({n}, lz::float32);
    const lz::Tensor b = data({n}, lz::float32);
    batch.add({(a * b + 1.0) * a}, "chain " + what);
    batch.add({lz::sum(a * b)}, "dot " + what);
    batch.add({data({n, 3}, lz::int32) * 3 - 1}, "ints " + what);
  }
  for (lz::DType dtype : {lz::float32, lz::float64, lz::int32, lz::int64}) {
    batch.add({lz::random_uniform({257}, 99, -3, 3, dtype) + lz::arange(0, 257, 1, dtype)},
              std::string("uniform and arange ") + lz::dtype_name(dtype));
    batch.add({lz::full({5, 3}, 2.5, dtype) * data({5, 3}, dtype)},
              std::string("full ") + lz::dtype_name(dtype));
  }
  for (lz::DType dtype : lz::kAllDTypes) {
    batch.add({lz::where(sample({4, 33}, dtype, 31) == sample({33}, dtype, 32), 1, 2)},
              std::string("random leaves ") + lz::dtype_name(dtype));
  }
  for (lz::DType dtype : {lz::float32, lz::float64}) {
    batch.add({lz::random_normal({129}, 5, 1, 2, dtype) * 2.0},
              std::string("normal ") + lz::dtype_name(dtype));
  }
  for (lz::DType dtype : {lz::float32, lz::float64, lz::int32}) {
    // The matmul is cuBLAS's; its epilogue (bias, relu) is generated.
    const lz::Tensor bias = data({4}, dtype);
    batch.add({lz::relu(lz::matmul(data({2, 7, 3}, dtype), data({3, 4}, dtype)) + bias)},
              std::string("matmul epilogue ") + lz::dtype_name(dtype));
  }
  batch.compile_and_check();
  EXPECT_TRUE(batch.unsupported().empty()) << batch.unsupported().front();
}

/// The PTX of the one kernel computing `output`, compiled alone.
std::string ptx_of(const lz::Tensor& output) {
  const std::vector<lz::plan::Kernel> kernels = kernels_of({output});
  EXPECT_EQ(kernels.size(), 1u);
  const CudaKernelSource source = lz::codegen::cuda::generate_cuda_source(kernels.back(), "lz_k");
  return lz::codegen::cuda::compile_cuda(source.translation_unit(), kArch, /*want_ptx=*/true).ptx;
}

int occurrences(const std::string& text, const std::string& what) {
  int count = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++count;
  return count;
}

// On the H200, float32 exp through float64 and a row reduction with one load in flight per
// thread held softmax at 27% of the copy bandwidth (issue 21's first run); the PTX shows both.
TEST(CudaCodegenTest, Float32FunctionsStayInFloat32) {
  SKIP_WITHOUT_NVRTC();
  const lz::Tensor x = data({1000}, lz::float32);
  // Not sin and cos: libdevice's sinf reduces huge arguments (rarely taken) in float64.
  const lz::Tensor y =
      lz::exp(x) + lz::log(x) + lz::tanh(x) + lz::sigmoid(x) + lz::rsqrt(x) + lz::pow(x, x);
  const std::string ptx = ptx_of(y);
  EXPECT_EQ(occurrences(ptx, ".f64"), 0) << ptx;
}

TEST(CudaCodegenTest, ABlockPerRowKeepsSeveralLoadsInFlight) {
  SKIP_WITHOUT_NVRTC();
  const std::string ptx = ptx_of(lz::max(data({4, 8192}, lz::float32), {1}));
  // Unrolled by 8, with a remainder loop: one load per iteration would be 1 or 2.
  EXPECT_GE(occurrences(ptx, "ld.global"), 8) << ptx;
}

TEST(CudaCodegenTest, ABlockPerRowAsksForFullOccupancy) {
  SKIP_WITHOUT_NVRTC();
  // Softmax: one kernel, max then exp-sum then divide; the exp-sum-divide part alone took 48
  // registers a thread unbounded, which left 5 blocks resident.
  const lz::Tensor x = data({4, 8192}, lz::float32);
  const lz::Tensor e = lz::exp(x - lz::max(x, {1}, true));
  const std::vector<lz::plan::Kernel> kernels = kernels_of({e / lz::sum(e, {1}, true)});
  ASSERT_EQ(kernels.size(), 1u);
  const CudaKernelSource source = lz::codegen::cuda::generate_cuda_source(kernels.back(), "lz_k");
  const std::string ptx =
      lz::codegen::cuda::compile_cuda(source.translation_unit(), kArch, /*want_ptx=*/true).ptx;
  EXPECT_NE(ptx.find(".minnctapersm 8"), std::string::npos) << ptx;
  // A thread per position (short rows) needs no such bound.
  EXPECT_EQ(ptx_of(lz::max(data({4, 16}, lz::float32), {1})).find(".minnctapersm"),
            std::string::npos);
}

TEST(CudaCodegenTest, ABlockPerRowStagesTheRowItReadsAgainInSharedMemory) {
  // Softmax reads x in three passes (max, sum of exp, divide): the first keeps the block's row.
  const lz::Tensor x = data({4, 8192}, lz::float32);
  const std::vector<lz::plan::Kernel> kernels = kernels_of({lz::softmax(x, 1)});
  ASSERT_EQ(kernels.size(), 1u);
  const std::string staged =
      lz::codegen::cuda::generate_cuda_source(kernels[0], "lz_k").definitions;
  EXPECT_NE(staged.find("__shared__ float row_in0[8192];"), std::string::npos) << staged;
  // A float64 row of 8192 (64 KiB) is over the budget: it is read from global memory again.
  const lz::Tensor wide = data({4, 8192}, lz::float64);
  const std::string unstaged =
      lz::codegen::cuda::generate_cuda_source(kernels_of({lz::softmax(wide, 1)}).at(0), "lz_k")
          .definitions;
  EXPECT_EQ(unstaged.find("row_in0"), std::string::npos) << unstaged;
  // One pass over the row (a plain sum) stages nothing.
  const std::string one_pass =
      lz::codegen::cuda::generate_cuda_source(kernels_of({lz::sum(x, {1})}).at(0), "lz_k")
          .definitions;
  EXPECT_EQ(one_pass.find("__shared__ float row_"), std::string::npos) << one_pass;
}

// What an element computes is reference/counter_rng.h and reference/scalar_semantics.h
// themselves, not a copy kept in step by hand, and the generated code calls them.
TEST(CudaCodegenTest, ThePreambleIsTheReferenceSemantics) {
  const std::string preamble(lz::codegen::cuda::device_preamble());
  for (const char* definition :
       {"LZ_HOST_DEVICE inline double uniform_element(", "LZ_HOST_DEVICE inline T wrapping_add(",
        "LZ_HOST_DEVICE inline T saturating_float_to_integer(",
        "LZ_HOST_DEVICE inline T nan_propagating_maximum("}) {
    EXPECT_NE(preamble.find(definition), std::string::npos) << definition;
  }
  EXPECT_EQ(preamble.find("#pragma once"), std::string::npos);
  EXPECT_EQ(preamble.find("#include \"reference/"), std::string::npos);
  const lz::Tensor x = data({64}, lz::int32);
  const lz::Tensor y = lz::random_uniform({64}, /*seed=*/3, 0.0, 9.0, lz::int32);
  const std::string kernel =
      lz::codegen::cuda::generate_cuda_source(kernels_of({x * y + x}).at(0), "lz_k").definitions;
  EXPECT_NE(kernel.find("lz::reference::wrapping_mul<int>("), std::string::npos) << kernel;
  EXPECT_NE(kernel.find("lz::reference::uniform_element_as<int>("), std::string::npos) << kernel;
}

TEST(CudaCodegenTest, MatmulIsLeftToCublas) {
  const lz::Tensor product = lz::matmul(data({3, 4}, lz::float32), data({4, 2}, lz::float32));
  const std::vector<lz::plan::Kernel> kernels = kernels_of({product});
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_FALSE(lz::codegen::cuda::is_cuda_compilable(kernels[0]));
}

TEST(CudaCodegenTest, FuzzedGraphsCompile) {
  SKIP_WITHOUT_NVRTC();
  lz::passes::PassOptions tiny;
  tiny.max_kernel_ops = 3;
  tiny.max_kernel_inputs = 3;
  KernelBatch batch;
  for (uint64_t seed = 0; seed < 30; ++seed) {
    const lz::ir::Graph graph = lz::passes::test::GraphGenerator(seed).generate();
    const std::string what = "fuzz seed " + std::to_string(seed);
    batch.add(kernels_of_graph(graph), what);
    if (seed % 3 == 0) batch.add(kernels_of_graph(graph, tiny), what + " tiny kernels");
  }
  EXPECT_GT(batch.kernels(), 100);
  batch.compile_and_check();
  for (const std::string& refused : batch.unsupported()) {
    std::printf("[ refused  ] %s\n", refused.c_str());  // as the CPU lowering refuses them
  }
}

TEST(CudaCodegenTest, NvrtcFailureCarriesTheLogAndTheNumberedSource) {
  SKIP_WITHOUT_NVRTC();
  const std::string source =
      "extern \"C\" __global__ void broken(float* out) {\n"
      "  out[0] = undeclared_value;\n"
      "}\n";
  try {
    lz::codegen::cuda::compile_cuda(source, kArch);
    FAIL() << "a broken source compiled";
  } catch (const lz::Error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("identifier \"undeclared_value\" is undefined"), std::string::npos)
        << message;  // NVRTC's log
    EXPECT_NE(message.find("    2 |   out[0] = undeclared_value;"), std::string::npos)
        << message;  // the source, numbered
  }
}

TEST(CudaCodegenTest, UnsupportedArchitectureFallsBackToPtx) {
  SKIP_WITHOUT_NVRTC();
  const std::string source = "extern \"C\" __global__ void lz_tiny(float* out) { out[0] = 1; }\n";
  const lz::codegen::cuda::CompiledCuda compiled =
      lz::codegen::cuda::compile_cuda(source, "sm_999");
  EXPECT_TRUE(compiled.cubin.empty());
  EXPECT_EQ(compiled.target.rfind("compute_", 0), 0u) << compiled.target;
  EXPECT_NE(compiled.ptx.find(".entry lz_tiny("), std::string::npos) << compiled.ptx;
  EXPECT_THROW(lz::codegen::cuda::compile_cuda(source, "90"), lz::Error);
}

TEST(CudaCodegenTest, SourceDependsOnlyOnTheKernelKey) {
  const auto generate = [](const lz::Tensor& output) {
    const std::vector<lz::plan::Kernel> kernels = kernels_of({output});
    EXPECT_EQ(kernels.size(), 1u);
    return std::pair{
        lz::codegen::cuda::generate_cuda_source(kernels.back(), "k").definitions,
        lz::plan::kernel_scalars(kernels.back(), lz::plan::exact_sizes(kernels.back()))};
  };
  // A flat kernel: new sizes, scalars and seeds, same text.
  const auto flat = [](int64_t n, double scale, uint64_t seed) {
    const lz::Tensor x = lz::arange(0, static_cast<double>(n), 1, lz::float64);
    return lz::sqrt(x * scale + 7.0) - x + lz::random_uniform({n}, seed, 0, 1, lz::float64);
  };
  const auto [first, first_scalars] = generate(flat(100, 2.0, 1));
  const auto [again, again_scalars] = generate(flat(100, 2.0, 1));
  const auto [other, other_scalars] = generate(flat(5000, 3.0, 2));
  EXPECT_EQ(first, again);
  EXPECT_EQ(first, other) << "a new size, scalar or seed changed the source";
  EXPECT_NE(first_scalars, other_scalars) << "the scalars did not change: the test tests nothing";
  // A shaped kernel: new scalars, same text; its shape is in the text.
  const auto shaped = [](int64_t columns, double scale) {
    const lz::Tensor x = lz::reshape(lz::arange(0, static_cast<double>(5 * columns)), {5, columns});
    return lz::sum(x * scale, {1});
  };
  EXPECT_EQ(generate(shaped(7, 0.5)).first, generate(shaped(7, 4.0)).first);
  EXPECT_NE(generate(shaped(7, 0.5)).first, generate(shaped(9, 0.5)).first);
}

}  // namespace
