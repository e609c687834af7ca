// Kernels of runtime sizes (plan::Sizes::Runtime): code compiled for one set of extents runs
// every other set its key allows. Each expression is computed at three sets of extents, compiled
// for the first and reused for the others, and compared with the interpreter at each.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <lazuli/lazuli.h>

namespace {

/// The extents of one run, and the slice's (ceil((batch - 1) / 2), ceil((rows - 2) / 3)): all at
/// least plan::kMinRuntimeExtent and all different, in every set, so that every set has the same
/// kernel keys.
struct Extents {
  int64_t batch, rows, depth;
};
constexpr Extents kExtentSets[] = {{40, 52, 19}, {58, 70, 25}, {36, 100, 31}};

struct Case {
  std::string name;
  std::function<std::vector<lz::Tensor>(const Extents&)> compute;
};

lz::Tensor matrix(const Extents& e, uint64_t seed) {
  return lz::random_uniform({e.batch, e.rows}, seed, -2, 2);
}

std::vector<Case> cases() {
  return {
      {"row bias",
       [](const Extents& e) {
         return std::vector{lz::relu(matrix(e, 1) * 2 + lz::random_uniform({e.rows}, 2))};
       }},
      {"column bias",
       [](const Extents& e) {
         return std::vector{matrix(e, 3) - lz::random_uniform({e.batch, 1}, 4)};
       }},
      {"transpose",
       [](const Extents& e) {
         return std::vector{lz::transpose(matrix(e, 5), {1, 0}) * 3 + 1};
       }},
      {"transpose of three axes",
       [](const Extents& e) {
         const lz::Tensor x = lz::random_uniform({e.batch, e.depth, e.rows}, 6);
         return std::vector{lz::sigmoid(lz::transpose(x, {2, 0, 1}))};
       }},
      {"strided slice",
       [](const Extents& e) {
         return std::vector{lz::slice(matrix(e, 7), {1, 2}, {e.batch, e.rows}, {2, 3}) * 2};
       }},
      {"reshape of a transpose",
       [](const Extents& e) {
         return std::vector{lz::reshape(lz::transpose(matrix(e, 8), {1, 0}), {e.rows * e.batch}) +
                            1};
       }},
      {"reductions by row and column",
       [](const Extents& e) {
         const lz::Tensor x = matrix(e, 9);
         return std::vector{lz::sum(x * x, {1}, /*keepdims=*/true), lz::max(x, {0}),
                            lz::argmax(x, 1), lz::mean(x + 1, {})};
       }},
      {"reduction over the outer axes",
       [](const Extents& e) {
         return std::vector{lz::sum(lz::random_uniform({e.batch, e.depth, e.rows}, 10), {0, 2})};
       }},
      {"softmax", [](const Extents& e) { return std::vector{lz::softmax(matrix(e, 11), -1)}; }},
      {"layer norm",
       [](const Extents& e) {
         const lz::Tensor x = matrix(e, 12);
         const lz::Tensor centered = x - lz::mean(x, {1}, true);
         return std::vector{centered * lz::rsqrt(lz::mean(centered * centered, {1}, true) + 1e-5)};
       }},
      {"where",
       [](const Extents& e) {
         const lz::Tensor x = matrix(e, 13);
         const lz::Tensor limit = lz::random_uniform({e.rows}, 14);
         return std::vector{lz::where(x > limit, x, -x)};
       }},
  };
}

/// The values of `tensors`, computed by the JIT or by the interpreter.
std::vector<std::vector<float>> values_of(const std::vector<lz::Tensor>& tensors) {
  std::vector<std::vector<float>> values;
  for (const lz::Tensor& tensor : tensors) {
    values.push_back(lz::astype(tensor, lz::float32).to_vector<float>());
  }
  return values;
}

int64_t kernels_built() {
  const lz::Stats stats = lz::stats();
  return stats.kernels_compiled + stats.disk_cache_hits;
}

class RuntimeSizesTest : public ::testing::Test {
 protected:
  // Strict: a kernel the JIT refused would fail, not be compared with the interpreter as itself.
  void SetUp() override {
    lz::waitall();
    lz::set_jit_strict(true);
  }
  void TearDown() override {
    lz::set_jit(true);
    lz::set_jit_strict(false);
  }
};

}  // namespace

TEST_F(RuntimeSizesTest, KernelsCompiledForOneSizeComputeEveryOtherAsTheInterpreterDoes) {
  int64_t built_for_first_set = 0;
  for (const Extents& extents : kExtentSets) {
    for (const Case& c : cases()) {
      SCOPED_TRACE(c.name + " at " + std::to_string(extents.batch) + "x" +
                   std::to_string(extents.rows) + "x" + std::to_string(extents.depth));
      lz::set_jit(true);
      const std::vector<std::vector<float>> compiled = values_of(c.compute(extents));
      lz::set_jit(false);
      const std::vector<std::vector<float>> interpreted = values_of(c.compute(extents));
      ASSERT_EQ(compiled.size(), interpreted.size());
      for (size_t t = 0; t < compiled.size(); ++t) {
        ASSERT_EQ(compiled[t].size(), interpreted[t].size()) << "result " << t;
        for (size_t i = 0; i < compiled[t].size(); ++i) {
          ASSERT_NEAR(compiled[t][i], interpreted[t][i], 1e-5 + 1e-5 * std::abs(interpreted[t][i]))
              << "result " << t << ", element " << i;
        }
      }
    }
    if (&extents == &kExtentSets[0]) built_for_first_set = kernels_built();
  }
  EXPECT_EQ(kernels_built(), built_for_first_set)
      << "kernels were compiled again for extents that their keys leave out";
}

/// `count` whole numbers from {-3, -2, -1, 1, 2, 3} (never 0), the same for the same seed.
std::vector<float> small_whole_numbers(int64_t count, uint32_t seed) {
  std::vector<float> values(static_cast<size_t>(count));
  uint32_t state = seed;
  for (float& value : values) {
    state = state * 1664525u + 1013904223u;
    const int magnitude = 1 + static_cast<int>((state >> 16) % 3);
    value = static_cast<float>((state >> 30) & 1 ? magnitude : -magnitude);
  }
  return values;
}

// sum(x) over 65,536 elements or more splits across threads (a partial and a finish phase); below
// that it is one loop. The key holds that choice, so both run right with warm code.
TEST_F(RuntimeSizesTest, ReductionsToOneValueSplitOrNotByTheirSize) {
  const int64_t extents[][2] = {{300, 320}, {257, 400}, {40, 50}, {30, 70}};
  int64_t built_before = kernels_built();
  for (const auto& [rows, columns] : extents) {
    SCOPED_TRACE(std::to_string(rows) + "x" + std::to_string(columns));
    // Whole products of at most 9 in magnitude: every partial sum (at most 9 * 102,800 < 2^24) is
    // exact in float32, so any order of summing gives the exact total, computed here in plain
    // loops; a sum that missed one element would be off by 1 or more.
    const std::vector<float> x_values = small_whole_numbers(rows * columns, 21);
    const std::vector<float> y_values = small_whole_numbers(columns, 22);
    double expected = 0;
    for (int64_t i = 0; i < rows * columns; ++i) {
      expected += double{x_values[i]} * y_values[i % columns];
    }
    const lz::Tensor x = lz::from_vector(x_values, {rows, columns});
    const lz::Tensor y = lz::from_vector(y_values, {columns});
    lz::waitall();
    lz::set_jit(true);
    const double compiled = lz::sum(x * y).item<float>();
    lz::set_jit(false);
    const double interpreted = lz::sum(x * y).item<float>();
    // Relative, and below 1 for any total under 2^24: missing the smallest term fails it.
    const double tolerance = 1e-7 * std::abs(expected);
    ASSERT_LT(tolerance, 1.0);
    EXPECT_NEAR(compiled, expected, tolerance);
    EXPECT_NEAR(interpreted, expected, tolerance);
    if (rows == 257 || rows == 30) {
      EXPECT_EQ(kernels_built(), built_before) << "the second size of each kind compiled again";
    }
    built_before = kernels_built();
  }
}
