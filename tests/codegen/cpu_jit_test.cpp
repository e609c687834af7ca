// The CPU JIT against the reference interpreter (lz::set_jit(false)) on what the differential
// fuzzer reaches least: every reduction axis, views read inside kernels, vector tails, sizes 0
// and 1; and the kernel cache's behaviour through lz::stats().
#include <gtest/gtest.h>

#include <lazuli/lazuli.h>
#include <array>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "codegen/cpu/kernel_cache.h"
#include "codegen/disk_cache.h"
#include "ir/parser.h"
#include "plan/kernel_layout.h"
#include "runtime/thread_pool.h"

namespace {

using Build = std::function<lz::Tensor()>;

/// The raw bytes of a tensor's elements, whatever its dtype.
std::vector<double> values_of(const lz::Tensor& t) {
  std::vector<double> values;
  switch (t.dtype()) {
    case lz::DType::Float32:
      for (float v : t.to_vector<float>()) values.push_back(v);
      break;
    case lz::DType::Float64: values = t.to_vector<double>(); break;
    case lz::DType::Int32:
      for (int32_t v : t.to_vector<int32_t>()) values.push_back(v);
      break;
    case lz::DType::Int64:
      for (int64_t v : t.to_vector<int64_t>()) values.push_back(static_cast<double>(v));
      break;
    case lz::DType::Bool:
      for (bool v : t.to_vector<bool>()) values.push_back(v);
      break;
  }
  return values;
}

/// The kernels the CPU JIT leaves to the interpreter by design, each with its reason: a
/// comparison may interpret these and no others (strict mode fails any other).
enum class Interpreted {
  Nothing,
  // A matmul of integers or bools: the JIT compiles no matmul, and BLAS multiplies only float32
  // and float64 matrices. Its epilogue is a kernel of its own, compiled.
  IntegerMatmul,
};

/// Turns the JIT on, strict unless `strict` is false, until the scope ends; then not strict.
struct CompiledScope {
  explicit CompiledScope(bool strict = true) {
    lz::set_jit(true);
    lz::set_jit_strict(strict);
  }
  ~CompiledScope() { lz::set_jit_strict(false); }
};

/// Computes the expressions `build` records (new ones at each call) compiled, then interpreted
/// (lz::set_jit(false)), and compares: exactly for integers and bools, within a relative 1e-5
/// (float32) or 1e-12 (float64) for floats, since reductions sum in another order. The compiled
/// side must have compiled: it runs strict (a kernel the JIT refuses fails with an lz::Error
/// naming it), launches kernels (an expression computed before `build` compares nothing), and
/// interprets exactly the kernels that `interpreted` allows.
void expect_all_match_interpreter(const std::function<std::vector<lz::Tensor>()>& build,
                                  const std::string& what,
                                  Interpreted interpreted = Interpreted::Nothing) {
  std::vector<lz::Tensor> compiled;
  std::vector<std::vector<double>> got;
  {
    // An allowed interpreted kernel would fail strict: then the count below is the check.
    const CompiledScope jit(/*strict=*/interpreted == Interpreted::Nothing);
    const lz::Stats before = lz::stats();
    try {
      compiled = build();
      for (const lz::Tensor& t : compiled) got.push_back(values_of(t));
    } catch (const lz::Error& error) {
      FAIL() << what << ": the compiled run failed: " << error.what();
    }
    const lz::Stats after = lz::stats();
    size_t elements = 0;
    for (const std::vector<double>& values : got) elements += values.size();
    if (elements > 0) {  // an empty result may need no kernel
      EXPECT_GT(after.kernels_launched, before.kernels_launched)
          << what << ": no kernel ran, so nothing compiled was compared";
    }
    EXPECT_EQ(after.kernels_interpreted - before.kernels_interpreted,
              interpreted == Interpreted::IntegerMatmul ? 1 : 0)
        << what << ": kernels were interpreted beyond those allowed";
  }
  lz::set_jit(false);
  const std::vector<lz::Tensor> reference = build();
  std::vector<std::vector<double>> want;
  for (const lz::Tensor& t : reference) want.push_back(values_of(t));
  lz::set_jit(true);
  ASSERT_EQ(compiled.size(), reference.size()) << what;
  for (size_t t = 0; t < compiled.size(); ++t) {
    ASSERT_EQ(compiled[t].shape(), reference[t].shape()) << what << " result " << t;
    ASSERT_EQ(got[t].size(), want[t].size()) << what << " result " << t;
    const double rtol = compiled[t].dtype() == lz::float32 ? 1e-5 : 1e-12;
    for (size_t i = 0; i < got[t].size(); ++i) {
      if (std::isnan(want[t][i])) {
        EXPECT_TRUE(std::isnan(got[t][i])) << what << " result " << t << " at " << i;
        continue;
      }
      EXPECT_NEAR(got[t][i], want[t][i], rtol * (1 + std::abs(want[t][i])))
          << what << " result " << t << " at " << i;
    }
  }
}

/// expect_all_match_interpreter of one expression.
void expect_matches_interpreter(const Build& build, const std::string& what,
                                Interpreted interpreted = Interpreted::Nothing) {
  expect_all_match_interpreter([&] { return std::vector<lz::Tensor>{build()}; }, what, interpreted);
}

lz::Tensor sample(lz::Shape shape, lz::DType dtype, uint64_t seed) {
  if (dtype == lz::bool_) return lz::random_uniform(shape, seed) > 0.5;
  if (lz::is_integer(dtype)) return lz::random_uniform(shape, seed, -50, 50, dtype);
  lz::Tensor x = lz::random_normal(shape, seed, 0, 1, dtype);
  return x;
}

TEST(CpuJitTest, ReductionsOverEveryAxisAndDtype) {
  const lz::Shape shape{3, 5, 17};
  for (lz::DType dtype : {lz::float32, lz::float64, lz::int32, lz::int64}) {
    for (std::vector<int> axes :
         std::vector<std::vector<int>>{{0}, {1}, {2}, {0, 1}, {0, 2}, {1, 2}, {0, 1, 2}, {-1}}) {
      for (bool keepdims : {false, true}) {
        const std::string what = std::string(lz::dtype_name(dtype)) + " axes " +
                                 std::to_string(axes.size()) + "," + std::to_string(axes[0]);
        expect_matches_interpreter([&] { return lz::sum(sample(shape, dtype, 1), axes, keepdims); },
                                   "sum " + what);
        expect_matches_interpreter([&] { return lz::max(sample(shape, dtype, 2), axes, keepdims); },
                                   "max " + what);
        expect_matches_interpreter([&] { return lz::min(sample(shape, dtype, 3), axes, keepdims); },
                                   "min " + what);
      }
    }
    for (int axis : {0, 1, 2}) {
      expect_matches_interpreter([&] { return lz::argmax(sample(shape, dtype, 4), axis); },
                                 "argmax axis " + std::to_string(axis));
      expect_matches_interpreter([&] { return lz::argmin(sample(shape, dtype, 8), axis); },
                                 "argmin axis " + std::to_string(axis));
    }
  }
  for (int axis : {0, 1, 2}) {
    expect_matches_interpreter([&] { return lz::max(sample(shape, lz::bool_, 5), {axis}); }, "any");
    expect_matches_interpreter([&] { return lz::min(sample(shape, lz::bool_, 6), {axis}); }, "all");
    expect_matches_interpreter([&] { return lz::argmax(sample(shape, lz::bool_, 7), axis); },
                               "bool argmax");
  }
}

TEST(CpuJitTest, ColumnReductionsOverSeveralTilesMatchTheInterpreter) {
  // Reductions over leading axes run up to 1,024 kept positions side by side: 2,500 columns
  // are two full tiles and a part, per thread chunk, with a result-shaped epilogue.
  const lz::Shape wide{7, 2500};
  for (lz::DType dtype : {lz::float32, lz::float64, lz::int32, lz::int64}) {
    const std::string what = std::string(" ") + lz::dtype_name(dtype);
    expect_matches_interpreter([&] { return lz::sum(sample(wide, dtype, 11), 0); }, "sum" + what);
    expect_matches_interpreter([&] { return lz::max(sample(wide, dtype, 12), 0, true); },
                               "max keepdims" + what);
    expect_matches_interpreter(
        [&] {
          return lz::min(sample({2, 3, 1100}, dtype, 13), {0, 1});
        },
        "min over two leading axes" + what);
  }
  expect_matches_interpreter([&] { return lz::max(sample(wide, lz::bool_, 14), 0); }, "any");
  expect_matches_interpreter(
      [&] { return lz::mean(sample(wide, lz::float32, 15), 0) * 2.0f + 1.0f; }, "mean epilogue");
  std::vector<float> values(3 * 1500, 1.0f);
  values[1500 + 1200] = std::nanf("");  // row 1, column 1200 (the second tile)
  expect_matches_interpreter(
      [&] {
        return lz::max(lz::from_vector(values, {3, 1500}), 0);
      },
      "max with a NaN in the second tile");
}

TEST(CpuJitTest, NaNsInReductionsAndMaximum) {
  const float nan = std::nanf("");
  const std::vector<float> values{1, nan, 3, -2, 5, 4, nan, 0, -1, 7, 7, 2};
  const auto x = [&] { return lz::from_vector(values, {3, 4}); };
  expect_matches_interpreter([&] { return lz::max(x(), {1}); }, "max with NaN");
  expect_matches_interpreter([&] { return lz::min(x(), {0}); }, "min with NaN");
  expect_matches_interpreter([&] { return lz::argmax(x(), 1); }, "argmax with NaN");
  expect_matches_interpreter([&] { return lz::argmin(x(), 1); }, "argmin with NaN");
  expect_matches_interpreter([&] { return lz::argmin(x(), 0); }, "argmin with NaN, axis 0");
  expect_matches_interpreter([&] { return lz::maximum(x(), 2.0); }, "maximum with NaN");
  expect_matches_interpreter([&] { return lz::relu(x()); }, "relu with NaN");
  expect_matches_interpreter([&] { return x().astype(lz::int32); }, "NaN to int");
  expect_matches_interpreter([&] { return x().astype(lz::bool_); }, "NaN to bool");
}

TEST(CpuJitTest, ViewsReadInsideKernels) {
  const auto x = [] { return sample({6, 8, 5}, lz::float32, 11); };
  expect_matches_interpreter(
      [&] {
        return lz::transpose(x(), {2, 0, 1}) * 2.0 + 1.0;
      },
      "transpose");
  expect_matches_interpreter(
      [&] {
        return lz::exp(lz::slice(x(), {1, 0, 4}, {6, 8, 0}, {2, 3, -2}));
      },
      "slice");
  expect_matches_interpreter(
      [&] {
        return lz::reshape(lz::transpose(x()), {5, 48}) -
               lz::reshape(lz::sum(x(), {0, 1}, false), {5, 1});
      },
      "reshape of transpose minus sum");
  expect_matches_interpreter(
      [&] {
        return lz::concatenate({x(), x() * 2.0, lz::zeros({6, 1, 5})}, 1) + 1.0;
      },
      "concatenate");
  expect_matches_interpreter(
      [&] {
        return lz::broadcast_to(lz::arange(0, 5), {4, 5}) * lz::expand_dims(lz::arange(0, 4), 1);
      },
      "broadcast of aranges");
  expect_matches_interpreter([&] { return lz::softmax(x(), 1); }, "softmax over a middle axis");
  expect_matches_interpreter([&] { return x() - lz::mean(x(), {0}, true); }, "centre over axis 0");
}

/// Reductions chained in stages over the same axes (kernel_layout.h): the expressions are
/// computed together, must run as one compiled kernel, and must match the interpreter.
void expect_one_staged_kernel(const std::function<std::vector<lz::Tensor>()>& build,
                              const std::string& what) {
  lz::set_jit(true);
  const lz::Stats before = lz::stats();
  const std::vector<lz::Tensor> compiled = build();
  lz::waitall();
  const lz::Stats after = lz::stats();
  EXPECT_EQ(after.kernels_launched - before.kernels_launched, 1) << what;
  EXPECT_EQ(after.cache_hits + after.cache_misses - before.cache_hits - before.cache_misses, 1)
      << what << ": the kernel was not compiled";
  lz::set_jit(false);
  const std::vector<lz::Tensor> interpreted = build();
  lz::waitall();
  lz::set_jit(true);
  ASSERT_EQ(compiled.size(), interpreted.size());
  for (size_t t = 0; t < compiled.size(); ++t) {
    const std::vector<double> got = values_of(compiled[t]);
    const std::vector<double> want = values_of(interpreted[t]);
    ASSERT_EQ(got.size(), want.size()) << what << " output " << t;
    const double rtol = compiled[t].dtype() == lz::float32 ? 1e-5 : 1e-12;
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_NEAR(got[i], want[i], rtol * (1 + std::abs(want[i])))
          << what << " output " << t << " at " << i;
    }
  }
}

TEST(CpuJitTest, ChainedReductionStagesRunAsOneKernel) {
  for (const lz::Shape& shape : {lz::Shape{7, 12}, lz::Shape{5, 300}}) {
    const std::string size = lz::shape_string(shape);
    const auto x = [&] { return sample(shape, lz::float32, 41) * 3.0; };
    expect_one_staged_kernel(
        [&] {
          const lz::Tensor values = x();
          const lz::Tensor m = lz::max(values, {1}, true);
          const lz::Tensor shifted = values - m;
          const lz::Tensor total = lz::sum(lz::exp(shifted), {1}, true);
          return std::vector<lz::Tensor>{lz::exp(shifted) / total, m, total, shifted, values};
        },
        "softmax with every stage's values as outputs " + size);
    expect_one_staged_kernel(
        [&] {
          const lz::Tensor p = lz::softmax(x(), 1);
          const lz::Tensor spread = lz::sum(lz::square(p - lz::mean(p, {1}, true)), {1}, true);
          return std::vector<lz::Tensor>{p / spread +
                                         lz::argmax(p - spread, 1, true).astype(lz::float32)};
        },
        "three stages and an argmax " + size);
    expect_one_staged_kernel(
        [&] {
          const lz::Tensor values = x();
          const lz::Tensor centred = values - lz::mean(values, {1}, true);
          const lz::Tensor scale = lz::rsqrt(lz::mean(lz::square(centred), {1}, true) + 1e-5);
          return std::vector<lz::Tensor>{centred * scale, scale};
        },
        "layer norm " + size);
  }
  expect_one_staged_kernel(
      [] {
        const lz::Tensor x = sample({4, 6, 40}, lz::float64, 43);
        return std::vector<lz::Tensor>{lz::log_softmax(x, 2) + lz::softmax(x, 2)};
      },
      "log_softmax beside softmax");
  expect_one_staged_kernel(
      [] {
        const lz::Tensor x = sample({4, 6, 40}, lz::int32, 44);
        const lz::Tensor low = lz::min(x, {0, 2}, true);
        return std::vector<lz::Tensor>{lz::sum(x - low, {0, 2})};
      },
      "integers over two axes");
}

TEST(CpuJitTest, VectorTailsAndTinySizes) {
  for (int64_t n : {0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 33, 63, 65, 1000}) {
    const auto x = [n] { return sample({n}, lz::float32, 21); };
    const auto y = [n] { return sample({n}, lz::float32, 22); };
    const std::string what = "n=" + std::to_string(n);
    expect_matches_interpreter([&] { return (x() * y() + 1.0) * x(); }, "chain " + what);
    expect_matches_interpreter([&] { return lz::sum(x() * y()); }, "dot " + what);
    if (n > 0) expect_matches_interpreter([&] { return lz::max(x()); }, "max " + what);
    expect_matches_interpreter(
        [&] {
          return sample({n, 3}, lz::int32, 23) * 3 - 1;
        },
        "ints " + what);
  }
  expect_matches_interpreter([] { return lz::sum(lz::zeros({0, 4}), {0}); }, "sum over nothing");
}

TEST(CpuJitTest, EveryElementwiseOpAndDtype) {
  for (lz::DType dtype : {lz::float32, lz::float64, lz::int32, lz::int64}) {
    const auto a = [dtype] { return sample({4, 33}, dtype, 31); };
    const auto b = [dtype] { return sample({33}, dtype, 32); };
    const std::string name = lz::dtype_name(dtype);
    expect_matches_interpreter([&] { return a() + b(); }, "add " + name);
    expect_matches_interpreter([&] { return a() - b(); }, "sub " + name);
    expect_matches_interpreter([&] { return a() * b(); }, "mul " + name);
    expect_matches_interpreter([&] { return lz::maximum(a(), b()); }, "maximum " + name);
    expect_matches_interpreter([&] { return lz::minimum(a(), b()); }, "minimum " + name);
    expect_matches_interpreter([&] { return -a(); }, "neg " + name);
    expect_matches_interpreter([&] { return lz::abs(a()); }, "abs " + name);
    expect_matches_interpreter([&] { return lz::square(a()); }, "square " + name);
    expect_matches_interpreter([&] { return lz::relu(a()); }, "relu " + name);
    expect_matches_interpreter([&] { return a() < b(); }, "less " + name);
    expect_matches_interpreter([&] { return a() >= b(); }, "greater_equal " + name);
    expect_matches_interpreter([&] { return a() == b(); }, "equal " + name);
    expect_matches_interpreter([&] { return a() != b(); }, "not_equal " + name);
    expect_matches_interpreter([&] { return lz::where(a() > b(), a(), b()); }, "where " + name);
    for (lz::DType to : lz::kAllDTypes) {
      expect_matches_interpreter([&] { return a().astype(to); },
                                 "astype " + name + " to " + lz::dtype_name(to));
    }
    if (lz::is_integer(dtype)) {
      expect_matches_interpreter([&] { return lz::pow(a(), lz::minimum(lz::abs(b()), 7)); },
                                 "pow " + name);
    } else {
      expect_matches_interpreter([&] { return a() / b(); }, "div " + name);
      expect_matches_interpreter([&] { return lz::pow(lz::abs(a()), b()); }, "pow " + name);
      for (auto f :
           {&lz::exp, &lz::sqrt, &lz::rsqrt, &lz::sin, &lz::cos, &lz::tanh, &lz::sigmoid}) {
        expect_matches_interpreter([&] { return f(a(), std::source_location::current()); },
                                   "unary " + name);
      }
      expect_matches_interpreter([&] { return lz::log(lz::abs(a())); }, "log " + name);
    }
  }
}

TEST(CpuJitTest, RandomLeavesAndArangeInsideKernels) {
  for (lz::DType dtype : {lz::float32, lz::float64, lz::int32, lz::int64}) {
    expect_matches_interpreter(
        [&] { return lz::random_uniform({257}, 99, -3, 3, dtype) + lz::arange(0, 257, 1, dtype); },
        std::string("uniform ") + lz::dtype_name(dtype));
  }
  for (lz::DType dtype : {lz::float32, lz::float64}) {
    expect_matches_interpreter([&] { return lz::random_normal({129}, 5, 1, 2, dtype) * 2.0; },
                               std::string("normal ") + lz::dtype_name(dtype));
  }
}

TEST(CpuJitTest, ReductionsToOneValueSplitAcrossThreads) {
  // Above 2^16 reduced elements a reduction to one value runs as per-thread partial states
  // combined in chunk order; below, as one loop. Both sides of the threshold, 1 and 4 threads.
  for (int threads : {1, 4}) {
    lz::runtime::set_thread_count(threads);
    for (int64_t n : {int64_t{1000}, int64_t{200003}}) {
      const std::string what =
          std::to_string(n) + " elements, " + std::to_string(threads) + " threads";
      for (lz::DType dtype : {lz::float32, lz::float64, lz::int32, lz::int64}) {
        const auto x = [&] { return sample({n}, dtype, 51); };
        expect_matches_interpreter([&] { return lz::sum(x()); }, "sum " + what);
        expect_matches_interpreter([&] { return lz::max(x()); }, "max " + what);
        expect_matches_interpreter([&] { return lz::min(x() * 2, {}, true); }, "min " + what);
      }
      const auto y = [&] { return lz::reshape(sample({n}, lz::float32, 52), {n, 1}); };
      expect_matches_interpreter([&] { return y() - lz::mean(y()); }, "centre " + what);
      expect_matches_interpreter([&] { return lz::sum(y()) * 2.0 + lz::max(y()); },
                                 "two results " + what);
      expect_matches_interpreter([&] { return lz::max(sample({n}, lz::bool_, 53)); },
                                 "any " + what);
      expect_matches_interpreter([&] { return lz::min(sample({n}, lz::bool_, 54)); },
                                 "all " + what);
      expect_matches_interpreter(
          [&] {
            return lz::max(
                lz::where(lz::arange(0, double(n)) == 777.0, std::nan(""), lz::reshape(y(), {n})));
          },
          "max with a NaN " + what);
    }
  }
  lz::runtime::set_thread_count(0);
}

TEST(CpuJitTest, OnlyReductionsToOneValueOf65536ElementsOrMoreAreSplit) {
  // The test above sees values, which splitting does not change; this one sees the choice.
  const auto splits = [](std::string_view shape, std::string_view axes, std::string_view result) {
    const std::string text = "%x = data() : f32" + std::string(shape) +
                             "\n%s = sum(%x) {axes=" + std::string(axes) +
                             ", keepdims=false} : f32" + std::string(result) + "\nreturn %s\n";
    const lz::ir::Graph graph = lz::ir::parse_graph(text).graph;
    return lz::plan::cpu_splits_across_threads(*graph.nodes.back());
  };
  EXPECT_TRUE(splits("[65536]", "[0]", "[]"));
  EXPECT_FALSE(splits("[65535]", "[0]", "[]"));
  EXPECT_TRUE(splits("[2,32768]", "[0,1]", "[]"));
  EXPECT_FALSE(splits("[2,65536]", "[1]", "[2]")) << "two results";
}

TEST(CpuJitTest, MatmulThroughBlasWithFusedEpilogues) {
  for (lz::DType dtype : {lz::float32, lz::float64, lz::int32}) {
    const Interpreted interpreted =
        lz::is_floating(dtype) ? Interpreted::Nothing : Interpreted::IntegerMatmul;
    const auto x = [dtype] { return sample({5, 5}, dtype, 61); };
    expect_matches_interpreter([&] { return lz::matmul(x(), x()); }, "x @ x (one input)",
                               interpreted);
    expect_matches_interpreter(
        [&] {
          const lz::Tensor bias = sample({4}, dtype, 64);
          return lz::relu(lz::matmul(sample({2, 7, 3}, dtype, 62), sample({3, 4}, dtype, 63)) +
                          bias);
        },
        "batched matmul + bias, relu", interpreted);
  }
}

// What expect_all_match_interpreter relies on: strict, a kernel the JIT does not compile fails
// its op, naming it and why, instead of running through the interpreter; not strict, it runs
// there and lz::stats() counts it.
TEST(CpuJitTest, StrictModeFailsAKernelTheJitDoesNotCompileAndCountsItOtherwise) {
  const lz::Tensor a = lz::from_vector<int32_t>({1, 2, 3, 4, 5, 6}, {2, 3});
  const lz::Tensor b = lz::from_vector<int32_t>({1, 0, -1, 2, 3, 1}, {3, 2});
  lz::waitall();
  {
    const CompiledScope strict;
    const lz::Tensor product = lz::matmul(a, b);
    try {
      product.wait_to_read();
      ADD_FAILURE() << "an integer matmul ran under LZ_JIT=strict";
    } catch (const lz::Error& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find("[matmul] recorded at"), std::string::npos) << message;
      EXPECT_NE(message.find("cpu_jit_test.cpp:"), std::string::npos) << message;
      EXPECT_NE(message.find("result: int32 (2,2)) is not compiled"), std::string::npos) << message;
      EXPECT_NE(message.find("BLAS multiplies only float32 and float64 matrices, not int32"),
                std::string::npos)
          << message;
      EXPECT_NE(message.find("LZ_JIT=strict"), std::string::npos) << message;
    }
  }
  const CompiledScope lenient(/*strict=*/false);
  const lz::Stats before = lz::stats();
  // (1 2 3; 4 5 6) @ (1 0; -1 2; 3 1), by hand.
  EXPECT_EQ(lz::matmul(a, b).to_vector<int32_t>(), std::vector<int32_t>({8, 7, 17, 16}));
  EXPECT_EQ(lz::stats().kernels_interpreted - before.kernels_interpreted, 1);
}

/// Run by the test below in a process of its own, with LZ_JIT=strict in its environment.
TEST(JitSettingChild, IntegerMatmulFailsAndFloatMatmulRuns) {
  const char* setting = std::getenv("LZ_JIT");
  if (setting == nullptr || std::string(setting) != "strict") {
    GTEST_SKIP() << "runs only as a child of LZ_JIT=strict's test";
  }
  const lz::Tensor ints = lz::from_vector<int32_t>({1, 2, 3, 4}, {2, 2});
  EXPECT_THROW(lz::matmul(ints, ints).wait_to_read(), lz::Error);
  const lz::Tensor floats = lz::from_vector<float>({1, 2, 3, 4}, {2, 2});
  EXPECT_EQ((lz::matmul(floats, floats) + 1.0f).to_vector<float>(),
            std::vector<float>({8, 11, 16, 23}));
}

/// This test executable started again, running the tests `filter` selects with only
/// `environment`; its process id, or 0 when it could not start.
pid_t spawn_this_executable(const std::string& filter, std::vector<std::string> environment) {
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  std::vector<std::string> arguments{self, "--gtest_filter=" + filter};
  std::vector<char*> argv;
  for (std::string& argument : arguments) argv.push_back(argument.data());
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (std::string& variable : environment) envp.push_back(variable.data());
  envp.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawn(&pid, self.c_str(), nullptr, nullptr, argv.data(), envp.data()) != 0) return 0;
  return pid;
}

TEST(JitSettingTest, LzJitStrictFromTheEnvironmentFailsWhatTheJitDoesNotCompile) {
  std::vector<std::string> environment{"LZ_JIT=strict"};
  if (const char* cache = std::getenv("LZ_CACHE_DIR")) {
    environment.push_back(std::string("LZ_CACHE_DIR=") + cache);
  }
  const pid_t pid = spawn_this_executable("JitSettingChild.*", std::move(environment));
  ASSERT_NE(pid, 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child failed";
}

/// The bytes of tensor buffers that `evaluate` allocates (lz::stats().bytes_allocated).
int64_t bytes_allocated_by(const std::function<void()>& evaluate) {
  const int64_t before = lz::stats().bytes_allocated;
  evaluate();
  return lz::stats().bytes_allocated - before;
}

// The kernel after a matmul that computes from it row by row runs on each block of the product's
// rows as BLAS computes it (passes/matmul_epilogues.h). Its values are the interpreter's for both
// dtypes BLAS takes, on products of one block and of many (a block is half the core's L2), with
// row counts that split unevenly across 1 to 3 threads, NaNs kept by relu, casts, reductions over
// the rows, a transposed operand, and batches read in one call or matrix by matrix. The product
// takes no buffer of its own unless it is read too.
TEST(CpuJitTest, MatmulEpiloguesRunOnBlocksOfRowsWithoutWritingTheProduct) {
  struct Threads {
    ~Threads() { lz::runtime::set_thread_count(0); }
  } restore;
  for (const int threads : {1, 2, 3}) {
    lz::runtime::set_thread_count(threads);
    for (const lz::DType dtype : {lz::float32, lz::float64}) {
      const std::string in = std::string(" in ") + lz::dtype_name(dtype) + " on " +
                             std::to_string(threads) + " threads";
      // (rows, inner, columns): one block; many blocks of 128 columns; 100 columns, blocks
      // of a row count that is no power of two; 16 columns, blocks of 4,096 rows.
      for (const auto& [m, k, n] : std::vector<std::array<int64_t, 3>>{
               {7, 3, 5}, {3000, 64, 128}, {1500, 33, 100}, {9000, 24, 16}}) {
        const std::string what = "(" + std::to_string(m) + "," + std::to_string(k) + ") @ (" +
                                 std::to_string(k) + "," + std::to_string(n) + ")" + in;
        lz::Tensor x = sample({m, k}, dtype, 71);
        x = lz::where(lz::arange(0, m * k, 1, lz::int64).reshape({m, k}) == 5, NAN, x);
        const lz::Tensor w = sample({k, n}, dtype, 72);
        const lz::Tensor bias = sample({n}, dtype, 73);
        const lz::Tensor residual = sample({m, n}, dtype, 74);
        lz::waitall();
        const auto layer = [&] { return lz::relu(lz::matmul(x, w) + bias); };
        expect_matches_interpreter(layer, "relu(x @ w + b), " + what);
        const int64_t output_bytes = m * n * lz::dtype_size(dtype);
        EXPECT_EQ(bytes_allocated_by([&] { layer().wait_to_read(); }), output_bytes) << what;
        expect_matches_interpreter(
            [&] { return lz::astype(lz::tanh(lz::matmul(x, w)) * 3 + residual, lz::int32); },
            "int32(tanh(x @ w) * 3 + r), " + what);
        // Outputs of 4 KiB or more streamed: each block's stores from its first aligned
        // position on, and a fence at the end of each.
        lz::plan::set_cpu_streaming_threshold_bytes(4096);
        expect_matches_interpreter([&] { return lz::sin(lz::matmul(x, w)) - residual; },
                                   "sin(x @ w) - r streamed, " + what);
        lz::plan::set_cpu_streaming_threshold_bytes(-1);
        // Reductions over the rows: a softmax after a layer, a layer norm, a row's argmax.
        const auto softmax_layer = [&] { return lz::softmax(lz::matmul(x, w) + bias); };
        expect_matches_interpreter(softmax_layer, "softmax(x @ w + b), " + what);
        EXPECT_EQ(bytes_allocated_by([&] { softmax_layer().wait_to_read(); }), output_bytes)
            << what;
        expect_matches_interpreter(
            [&] {
              const lz::Tensor h = lz::matmul(x, w);
              const lz::Tensor centred = h - lz::mean(h, {1}, true);
              return centred * lz::rsqrt(lz::mean(centred * centred, {1}, true) + 1e-5);
            },
            "layer norm of x @ w, " + what);
        expect_matches_interpreter([&] { return lz::argmax(lz::matmul(x, w) - bias, 1); },
                                   "argmax(x @ w - b), " + what);
        // The product read too: written to its buffer, and the epilogue reads it there.
        const auto product_and_epilogue = [&] {
          const lz::Tensor product = lz::matmul(x, w);
          const lz::Tensor output = lz::sigmoid(product - bias);
          output.wait_to_read();  // one evaluation: the product is held, so it is written too
          return std::vector<lz::Tensor>{product, output};
        };
        EXPECT_EQ(bytes_allocated_by([&] { product_and_epilogue(); }), 2 * output_bytes) << what;
        expect_all_match_interpreter(product_and_epilogue,
                                     "product read too, and its epilogue, " + what);
      }
      const lz::Tensor h = sample({300, 40}, dtype, 75);
      const lz::Tensor g = sample({300, 24}, dtype, 76);
      const lz::Tensor stacked = sample({2, 3, 50, 20}, dtype, 77);
      const lz::Tensor shared = sample({3, 20, 40}, dtype, 78);
      const lz::Tensor single = sample({20, 40}, dtype, 79);
      lz::waitall();
      expect_matches_interpreter(
          [&] { return lz::exp(lz::matmul(lz::transpose(h), g) * 0.01) - 1; },
          "exp(h^T @ g / 100) - 1" + in);
      expect_matches_interpreter(
          [&] {
            return lz::abs(lz::matmul(lz::reshape(stacked, {6, 50, 20}), single));
          },
          "abs of batches in one call" + in);
      expect_matches_interpreter([&] { return lz::square(lz::matmul(stacked, shared)); },
                                 "square of a broadcast batch" + in);
      // Rows too wide for a block of them to stay in cache, and an empty sum: the product is
      // written, then the epilogue runs as a kernel of its own.
      const lz::Tensor wide = sample({4, 70000}, dtype, 80);
      lz::waitall();
      expect_matches_interpreter(
          [&] {
            return lz::matmul(sample({16, 4}, dtype, 81), wide) + 1;
          },
          "rows of 70,000" + in);
      expect_matches_interpreter(
          [&] {
            return lz::matmul(lz::ones({5, 0}, dtype), lz::ones({0, 7}, dtype)) + 1;
          },
          "K = 0" + in);
      // No columns: the rows' reductions still have values to write.
      const lz::Tensor no_columns = lz::ones({3, 0}, dtype);
      lz::waitall();
      expect_matches_interpreter(
          [&] {
            return lz::sum(lz::matmul(sample({64, 3}, dtype, 82), no_columns), {1});
          },
          "row sums of (64,3) @ (3,0)" + in);
      expect_matches_interpreter(
          [&] {
            return lz::sum(lz::exp(lz::matmul(sample({64, 3}, dtype, 83), no_columns)), {1}, true) +
                   2;
          },
          "row sums of exp((64,3) @ (3,0)) + 2" + in);
    }
  }
}

// An epilogue whose outputs do not fit in memory fails alone, as it would run on its own: the
// product, read too, is computed.
TEST(CpuJitTest, AnEpilogueThatCannotAllocateFailsOnlyItsOutputs) {
  const lz::Tensor x = lz::ones({4096, 8});
  const lz::Tensor w = lz::ones({8, 256});
  const lz::Tensor bias = lz::ones({256}, lz::float64);
  lz::waitall();
  struct Limit {
    Limit() { lz::set_memory_limit(8 << 20); }  // the 4 MiB product fits, the 8 MiB sum does not
    ~Limit() { lz::set_memory_limit(0); }
  } limit;
  const lz::Tensor product = lz::matmul(x, w);
  const lz::Tensor wide = lz::astype(product, lz::float64) + bias;
  EXPECT_THROW(wide.wait_to_read(), lz::Error);
  EXPECT_EQ(product.to_vector<float>()[0], 8.0f);
}

// A flat kernel whose outputs take plan::cpu_streaming_threshold_bytes() or more writes them with
// non-temporal stores from its first position that is a multiple of 64 on, and ordinary ones
// before it and in the vector loop's tail: every dtype, sizes on both sides of the threshold, and
// thread counts whose chunks start anywhere.
TEST(CpuJitTest, StreamedOutputsMatchTheInterpreter) {
  // Restores the threshold and the thread count however the test ends.
  struct Settings {
    Settings() { lz::plan::set_cpu_streaming_threshold_bytes(4096); }
    ~Settings() {
      lz::runtime::set_thread_count(0);
      lz::plan::set_cpu_streaming_threshold_bytes(-1);
    }
  } settings;
  for (const int threads : {1, 2, 3}) {
    lz::runtime::set_thread_count(threads);
    // 1023 float32 are 4092 bytes: below; 1024 are at the threshold.
    for (const int64_t n : {1000, 1023, 1024, 1025, 1100, 4095, 5001}) {
      const std::string what =
          std::to_string(n) + " elements on " + std::to_string(threads) + " threads";
      for (const lz::DType dtype : {lz::float32, lz::float64, lz::int32, lz::int64}) {
        // Computed first, so that the kernel is loads, arithmetic and stores, which vectorize.
        const lz::Tensor x = sample({n}, dtype, 51);
        const lz::Tensor y = sample({n}, dtype, 52);
        lz::waitall();
        expect_matches_interpreter([&] { return (x * y + 1) * x; },
                                   std::string(lz::dtype_name(dtype)) + " chain of " + what);
        if (dtype == lz::float32) {
          expect_matches_interpreter([&] { return x > y; }, "bools of " + what);
        }
      }
    }
  }
}

TEST(CpuJitTest, SameResultsForOneAndManyThreads) {
  const auto run = [](int threads) {
    lz::runtime::set_thread_count(threads);
    const lz::Tensor x = lz::random_normal({300000}, 41);
    const lz::Tensor y = (x * 3.0 + 1.0) * x;
    const lz::Tensor rows = lz::sum(lz::reshape(y, {3000, 100}), {1});
    std::pair result{y.to_vector<float>(), rows.to_vector<float>()};
    lz::runtime::set_thread_count(0);
    return result;
  };
  const auto one = run(1);
  const auto four = run(4);
  EXPECT_EQ(one.first, four.first);  // elementwise: bit for bit
  ASSERT_EQ(one.second.size(), four.second.size());
  for (size_t i = 0; i < one.second.size(); ++i) {
    EXPECT_NEAR(one.second[i], four.second[i], 1e-5 * (1 + std::abs(one.second[i])));
  }
}

TEST(KernelCacheTest, SameGraphCompilesOnceAndFlatKernelsServeEverySize) {
  lz::set_cache_directory("");  // memory only: a disk hit would not compile
  lz::codegen::forget_compiled_kernels();
  const auto evaluate = [](int64_t n, double scale) {
    const lz::Tensor x = lz::arange(0, static_cast<double>(n), 1, lz::float64);
    const lz::Tensor y = lz::sqrt(x * scale + 7.0) - x;
    return y.to_vector<double>();
  };
  lz::reset_stats();
  const std::vector<double> first = evaluate(100, 2.0);
  EXPECT_EQ(lz::stats().kernels_compiled, 1);
  EXPECT_EQ(first[10], std::sqrt(10 * 2.0 + 7.0) - 10);
  evaluate(100, 2.0);
  EXPECT_EQ(lz::stats().kernels_compiled, 1) << "the same graph compiled twice";
  EXPECT_EQ(lz::stats().cache_hits, 1);
  const std::vector<double> other = evaluate(5000, 3.0);  // new size and scalar
  EXPECT_EQ(lz::stats().kernels_compiled, 1) << "a new size or scalar recompiled";
  EXPECT_EQ(other[4999], std::sqrt(4999 * 3.0 + 7.0) - 4999);
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::filesystem::path fresh_directory(const std::string& name) {
  const std::filesystem::path directory =
      std::filesystem::temp_directory_path() / (name + "_" + std::to_string(getpid()));
  std::filesystem::remove_all(directory);
  return directory;
}

std::vector<std::filesystem::path> cache_files(const std::filesystem::path& directory) {
  std::vector<std::filesystem::path> files;
  if (!std::filesystem::exists(directory)) return files;
  for (const auto& entry : std::filesystem::directory_iterator(directory)) {
    if (entry.path().extension() == ".lzo") files.push_back(entry.path());
  }
  return files;
}

/// A reduction kernel (shaped, so each shape is its own kernel) and its expected values.
std::vector<double> row_sums(int64_t rows, int64_t columns) {
  const lz::Tensor x = lz::reshape(
      lz::arange(0, static_cast<double>(rows * columns), 1, lz::float64), {rows, columns});
  return lz::sum(x * 0.5, {1}).to_vector<double>();
}

double expected_row_sum(int64_t row, int64_t columns) {
  double total = 0;
  for (int64_t j = 0; j < columns; ++j) total += static_cast<double>(row * columns + j) * 0.5;
  return total;
}

TEST(KernelCacheTest, KeepsTheMostRecentlyUsedKernelsAndUnloadsTheRest) {
  lz::set_cache_directory("");  // memory only: an evicted kernel compiles again
  lz::codegen::forget_compiled_kernels();
  lz::set_kernel_cache_size(3);
  EXPECT_EQ(lz::codegen::loaded_kernel_count(), 0) << "forgotten kernels no launch runs";
  lz::reset_stats();
  // Each column count is a kernel of its own (a shaped reduction).
  const auto check = [](int64_t columns) {
    const std::vector<double> sums = row_sums(2, columns);
    EXPECT_EQ(sums[1], expected_row_sum(1, columns)) << columns << " columns";
  };
  check(3);
  const int64_t compiled_once = lz::stats().kernels_compiled;
  ASSERT_GT(compiled_once, 0);
  for (int64_t columns = 4; columns < 10; ++columns) {
    check(columns);
    const int64_t compiled = lz::stats().kernels_compiled;
    check(3);
    EXPECT_EQ(lz::stats().kernels_compiled, compiled) << "the most recently used was evicted";
  }
  EXPECT_EQ(lz::stats().kernels_compiled, 7 * compiled_once);
  EXPECT_EQ(lz::codegen::memory_cache_size(), 3);
  EXPECT_EQ(lz::codegen::loaded_kernel_count(), 3) << "evicted code stays loaded";
  check(4);
  EXPECT_EQ(lz::stats().kernels_compiled, 8 * compiled_once) << "an evicted kernel compiles again";

  EXPECT_THROW(lz::set_kernel_cache_size(0), lz::Error);
  lz::set_kernel_cache_size(lz::codegen::kDefaultMemoryCacheCapacity);
}

TEST(KernelCacheTest, DiskCacheServesNewProcessesAndRecoversFromDamagedFiles) {
  const std::filesystem::path directory = fresh_directory("lazuli_kernel_cache");
  lz::set_cache_directory(directory.string());
  const auto evaluate_fresh = [] {
    lz::codegen::forget_compiled_kernels();  // as if a new process started
    lz::reset_stats();
    const std::vector<double> sums = row_sums(7, 13);
    EXPECT_EQ(sums[6], expected_row_sum(6, 13));
    return lz::stats();
  };
  EXPECT_EQ(evaluate_fresh().kernels_compiled, 1);
  ASSERT_EQ(cache_files(directory).size(), 1u);
  const lz::Stats loaded = evaluate_fresh();
  EXPECT_EQ(loaded.kernels_compiled, 0);
  EXPECT_EQ(loaded.disk_cache_hits, 1);

  const std::string good = read_file(cache_files(directory)[0]);
  const std::vector<std::string> damages{good.substr(0, good.size() / 2), "garbage", "",
                                         std::string(good.size(), '\x5a')};
  for (const std::string& damaged : damages) {
    std::ofstream(cache_files(directory)[0], std::ios::binary | std::ios::trunc) << damaged;
    EXPECT_EQ(evaluate_fresh().kernels_compiled, 1) << "a damaged file is a miss";
    EXPECT_EQ(evaluate_fresh().disk_cache_hits, 1) << "and is rewritten";
  }
  lz::set_cache_directory("");
  std::filesystem::remove_all(directory);
}

TEST(KernelCacheTest, CachedCodeThatDoesNotLoadIsCompiledAgainAndReplaced) {
  const std::filesystem::path directory = fresh_directory("lazuli_kernel_cache_unloadable");
  lz::set_cache_directory(directory.string());
  const auto evaluate_fresh = [] {
    lz::codegen::forget_compiled_kernels();  // as if a new process started
    lz::reset_stats();
    const std::vector<double> sums = row_sums(5, 11);
    EXPECT_EQ(sums[4], expected_row_sum(4, 11));
    return lz::stats();
  };
  EXPECT_EQ(evaluate_fresh().kernels_compiled, 1);
  ASSERT_EQ(cache_files(directory).size(), 1u);
  // The same key with a checksum that matches, over object code that is not an object file.
  const std::string entry = read_file(cache_files(directory)[0]);
  uint64_t key_length = 0;
  for (int i = 0; i < 8; ++i) {
    key_length |= uint64_t{static_cast<unsigned char>(entry[12 + i])} << (8 * i);
  }
  const std::string key = entry.substr(20, key_length);
  lz::codegen::DiskCache cache(directory, 1 << 30);
  ASSERT_TRUE(cache.store(key, std::string(4096, '\x7f')));
  ASSERT_TRUE(cache.load(key).has_value()) << "the damaged entry passes the cache's checks";

  lz::set_log_level(lz::LogLevel::Info);
  testing::internal::CaptureStderr();
  const lz::Stats recovered = evaluate_fresh();
  const std::string log = testing::internal::GetCapturedStderr();
  lz::set_log_level(lz::LogLevel::Off);
  EXPECT_EQ(recovered.kernels_compiled, 1) << "before: every later evaluation failed";
  EXPECT_NE(log.find("the cached object code did not load"), std::string::npos) << log;
  EXPECT_NE(log.find("compiled again and replaced"), std::string::npos) << log;
  EXPECT_EQ(evaluate_fresh().disk_cache_hits, 1) << "the entry was replaced";
  lz::set_cache_directory("");
  std::filesystem::remove_all(directory);
}

/// Run by the test below in two processes at once, sharing one cache directory.
TEST(KernelCacheChild, CompilesAndLoadsSharedKernels) {
  const char* directory = std::getenv("LAZULI_CACHE_CHILD_DIR");
  if (directory == nullptr) GTEST_SKIP() << "runs only as a child of TwoProcessesShareADirectory";
  lz::set_cache_directory(directory);
  for (int round = 0; round < 3; ++round) {
    lz::codegen::forget_compiled_kernels();
    for (int64_t columns = 1; columns <= 12; ++columns) {
      const std::vector<double> sums = row_sums(3, columns);
      ASSERT_EQ(sums[2], expected_row_sum(2, columns)) << columns;
    }
  }
}

TEST(KernelCacheTest, TwoProcessesShareADirectory) {
  const std::filesystem::path directory = fresh_directory("lazuli_shared_cache");
  std::vector<pid_t> children;
  for (int child = 0; child < 2; ++child) {
    const pid_t pid = spawn_this_executable("KernelCacheChild.*",
                                            {"LAZULI_CACHE_CHILD_DIR=" + directory.string()});
    ASSERT_NE(pid, 0);
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a child failed";
  }
  EXPECT_EQ(cache_files(directory).size(), 12u) << "one file per kernel, none half-written";
  std::filesystem::remove_all(directory);
}

TEST(KernelDumpTest, DumpWritesIrBeforeAndAfterOptimizationAndAssembly) {
  const std::filesystem::path directory = fresh_directory("lazuli_kernel_dump");
  lz::set_dump_directory(directory.string());
  const lz::Tensor a = lz::random_normal({4096}, 1);
  const lz::Tensor b = lz::random_normal({4096}, 2);
  lz::waitall();  // inputs as data, so the kernel is loads, arithmetic and stores
  ((a * b + 1.0) * a).wait_to_read();
  lz::set_dump_directory("");
  std::string before, after, assembly;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(directory)) {
    const std::string name = entry.path().filename().string();
    if (name.ends_with(".before_opt.ll")) before += read_file(entry.path());
    if (name.ends_with(".after_opt.ll")) after += read_file(entry.path());
    if (name.ends_with(".s")) assembly += read_file(entry.path());
  }
  EXPECT_NE(before.find("define void @lz_"), std::string::npos) << before;
  EXPECT_NE(after.find("x float>"), std::string::npos) << "the loop vectorized:\n" << after;
  EXPECT_NE(assembly.find("mul"), std::string::npos) << assembly;
  std::filesystem::remove_all(directory);
}

// Softmax's final loop divides the e = exp(x - max) that the sum's loop stored into the output,
// rather than computing exp again (or storing x, which max reads, and recomputing from there).
TEST(KernelDumpTest, FusedSoftmaxComputesEachExpOnce) {
  const std::filesystem::path directory = fresh_directory("lazuli_softmax_dump");
  lz::set_dump_directory(directory.string());
  const lz::Tensor x = lz::random_normal({64, 16}, 1);
  const lz::Tensor bias = lz::random_normal({16}, 2);
  lz::waitall();
  lz::softmax(x + bias, -1).wait_to_read();
  lz::set_dump_directory("");
  std::string before;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(directory)) {
    if (entry.path().filename().string().ends_with(".before_opt.ll")) {
      before += read_file(entry.path());
    }
  }
  // Each exp emitted scales its argument by 1/ln 2 (codegen/cpu/math_functions.cpp).
  const std::string one_over_ln2 = "0x3FF7154760000000";
  size_t exps = 0;
  for (size_t at = before.find(one_over_ln2); at != std::string::npos;
       at = before.find(one_over_ln2, at + 1)) {
    ++exps;
  }
  EXPECT_EQ(exps, 1u) << before;
  std::filesystem::remove_all(directory);
}

#if defined(__x86_64__)
TEST(KernelDumpTest, StreamedOutputsUseNonTemporalStoresAndAFence) {
  const std::filesystem::path directory = fresh_directory("lazuli_streaming_dump");
  lz::plan::set_cpu_streaming_threshold_bytes(4096);
  const lz::Tensor a = lz::random_normal({3001}, 1);
  const lz::Tensor b = lz::random_normal({3001}, 2);
  lz::waitall();
  lz::set_dump_directory(directory.string());
  (a * b - 3.0).wait_to_read();
  lz::set_dump_directory("");
  lz::plan::set_cpu_streaming_threshold_bytes(-1);
  std::string assembly;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(directory)) {
    if (entry.path().filename().string().ends_with(".s")) assembly += read_file(entry.path());
  }
  EXPECT_NE(assembly.find("movntp"), std::string::npos) << assembly;
  EXPECT_NE(assembly.find("sfence"), std::string::npos) << assembly;
  std::filesystem::remove_all(directory);
}
#endif

}  // namespace
