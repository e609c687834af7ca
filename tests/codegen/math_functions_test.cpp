// Accuracy of the JIT's inline float32 exp, log, sin, cos, tanh and sigmoid
// (codegen/cpu/math_functions.h) against the correctly rounded result (float)f((double)x), through
// the public API. Each range is a sweep of about 2^20 inputs: evenly spaced, random bit patterns
// of finite floats, every power of two, subnormals and the floats around thresholds. The max error
// of every sweep is printed, so the figures are in the test log.
#include <gtest/gtest.h>

#include <lazuli/lazuli.h>
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <iomanip>
#include <iostream>
#include <limits>
#include <numbers>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

constexpr float kInfinity = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr int64_t kSweep = int64_t{1} << 20;

/// A traced float32 function and its float64 reference.
struct MathFunction {
  const char* name;
  lz::Tensor (*traced)(const lz::Tensor&, std::source_location);
  double (*reference)(double);
};

const MathFunction kExp{"exp", &lz::exp, [](double x) { return std::exp(x); }};
const MathFunction kLog{"log", &lz::log, [](double x) { return std::log(x); }};
const MathFunction kSin{"sin", &lz::sin, [](double x) { return std::sin(x); }};
const MathFunction kCos{"cos", &lz::cos, [](double x) { return std::cos(x); }};
const MathFunction kTanh{"tanh", &lz::tanh, [](double x) { return std::tanh(x); }};
const MathFunction kSigmoid{"sigmoid", &lz::sigmoid,
                            [](double x) { return 1.0 / (1.0 + std::exp(-x)); }};

std::vector<float> evaluate(const MathFunction& function, const std::vector<float>& inputs) {
  const lz::Tensor x = lz::from_vector(inputs, {static_cast<int64_t>(inputs.size())});
  return function.traced(x, std::source_location::current()).to_vector<float>();
}

/// The position of x among the floats: neighbours differ by 1, and +0 and -0 are both 0.
int64_t float_index(float x) {
  const auto bits = std::bit_cast<int32_t>(x);
  return bits < 0 ? -static_cast<int64_t>(bits & 0x7fffffff) : bits;
}

/// Distance in ulps; a NaN where the reference is not (or the reverse) is infinitely far.
int64_t ulp_distance(float got, float want) {
  if (std::isnan(got) || std::isnan(want)) {
    return std::isnan(got) && std::isnan(want) ? 0 : std::numeric_limits<int64_t>::max();
  }
  return std::abs(float_index(got) - float_index(want));
}

std::string describe(float x) {
  std::ostringstream out;
  out << std::setprecision(9) << x << " (" << std::hexfloat << x << ")";
  return out.str();
}

/// The worst error of a function over a set of inputs.
struct Accuracy {
  int64_t max_ulps = 0;
  float worst_input = 0;
  float worst_got = 0;
  float worst_want = 0;
  double max_absolute = 0;  // over the inputs whose rounded reference is finite

  std::string worst() const {
    return "at x = " + describe(worst_input) + ": got " + describe(worst_got) + ", want " +
           describe(worst_want);
  }
};

Accuracy measure(const MathFunction& function, const std::vector<float>& inputs) {
  const std::vector<float> got = evaluate(function, inputs);
  Accuracy accuracy;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const double exact = function.reference(static_cast<double>(inputs[i]));
    const auto want = static_cast<float>(exact);
    const int64_t ulps = ulp_distance(got[i], want);
    if (ulps > accuracy.max_ulps || i == 0) {
      accuracy.max_ulps = ulps;
      accuracy.worst_input = inputs[i];
      accuracy.worst_got = got[i];
      accuracy.worst_want = want;
    }
    if (std::isfinite(want)) {
      accuracy.max_absolute = std::max(accuracy.max_absolute, std::abs(got[i] - exact));
    }
  }
  return accuracy;
}

/// Measures, prints and checks the max error in ulps over `inputs`.
Accuracy expect_within_ulps(const MathFunction& function, const std::string& range,
                            const std::vector<float>& inputs, int64_t bound) {
  const Accuracy accuracy = measure(function, inputs);
  std::cout << std::left << std::setw(8) << function.name << std::setw(46) << range << std::right
            << std::setw(9) << inputs.size() << " inputs: max " << accuracy.max_ulps
            << " ulp, max absolute " << std::setprecision(3) << accuracy.max_absolute << ", "
            << accuracy.worst() << "\n";
  EXPECT_LE(accuracy.max_ulps, bound)
      << function.name << " over " << range << " " << accuracy.worst();
  return accuracy;
}

// ---- Inputs ----------------------------------------------------------------------------------

/// `count` floats evenly spaced from `low` to `high`, both included.
std::vector<float> evenly_spaced(double low, double high, int64_t count = kSweep) {
  std::vector<float> values(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    values[static_cast<size_t>(i)] =
        static_cast<float>(low + (high - low) * static_cast<double>(i) / (count - 1));
  }
  return values;
}

/// Random bit patterns of finite floats in [low, high]: every exponent is equally likely, so small
/// magnitudes are as well covered as large ones.
std::vector<float> random_bits(float low, float high, uint32_t seed, int64_t count = kSweep) {
  std::mt19937 generator(seed);
  std::vector<float> values;
  values.reserve(static_cast<size_t>(count));
  while (static_cast<int64_t>(values.size()) < count) {
    const auto x = std::bit_cast<float>(static_cast<uint32_t>(generator()));
    if (std::isfinite(x) && x >= low && x <= high) values.push_back(x);
  }
  return values;
}

/// +-2^k for every k a float can hold, subnormal ones included, and those within [low, high].
std::vector<float> powers_of_two(float low = -kInfinity, float high = kInfinity) {
  std::vector<float> values;
  for (int k = -149; k <= 127; ++k) {
    for (const float x : {std::ldexp(1.0f, k), -std::ldexp(1.0f, k)}) {
      if (x >= low && x <= high) values.push_back(x);
    }
  }
  return values;
}

/// Random subnormals of both signs, and the smallest and largest ones.
std::vector<float> subnormals(uint32_t seed, int64_t count = int64_t{1} << 16) {
  std::mt19937 generator(seed);
  std::vector<float> values;
  for (int64_t i = 0; i < count; ++i) {
    const uint32_t bits = (generator() & 0x807fffff) | 1;  // exponent field 0, never zero
    values.push_back(std::bit_cast<float>(bits));
  }
  for (const float x : {std::numeric_limits<float>::denorm_min(),
                        std::nextafter(std::numeric_limits<float>::min(), 0.0f)}) {
    values.push_back(x);
    values.push_back(-x);
  }
  return values;
}

/// `center` and the `count` floats on each side of it.
std::vector<float> around(float center, int count = 4096) {
  std::vector<float> values{center};
  float below = center;
  float above = center;
  for (int i = 0; i < count; ++i) {
    below = std::nextafter(below, -kInfinity);
    above = std::nextafter(above, kInfinity);
    values.push_back(below);
    values.push_back(above);
  }
  return values;
}

std::vector<float> concatenate(std::initializer_list<std::vector<float>> parts) {
  std::vector<float> all;
  for (const std::vector<float>& part : parts) all.insert(all.end(), part.begin(), part.end());
  return all;
}

/// The floats nearest +-k pi/2 and their neighbours, where sin or cos is nearly zero and the
/// argument reduction loses the most.
void add_near_half_pi_multiple(double k, std::vector<float>& values) {
  const auto nearest = static_cast<float>(k * std::numbers::pi / 2);
  for (const float x :
       {std::nextafter(nearest, 0.0f), nearest, std::nextafter(nearest, kInfinity)}) {
    values.push_back(x);
    values.push_back(-x);
  }
}

/// Near every multiple of pi/2 up to `limit`.
std::vector<float> near_every_half_pi_multiple(double limit) {
  std::vector<float> values;
  for (int64_t k = 1; static_cast<double>(k) * std::numbers::pi / 2 <= limit; ++k) {
    add_near_half_pi_multiple(static_cast<double>(k), values);
  }
  return values;
}

/// Near random multiples of pi/2 up to `limit`, k spread evenly over its exponents.
std::vector<float> near_random_half_pi_multiples(double limit, uint32_t seed) {
  std::mt19937_64 generator(seed);
  std::uniform_real_distribution<double> exponent(0, std::log2(limit / std::numbers::pi * 2));
  std::vector<float> values;
  while (static_cast<int64_t>(values.size()) < kSweep) {
    add_near_half_pi_multiple(std::round(std::exp2(exponent(generator))), values);
  }
  return values;
}

// ---- Accuracy --------------------------------------------------------------------------------

class MathFunctionsTest : public ::testing::Test {
 protected:
  // Strict: the JIT's functions are measured, never the interpreter's in their place.
  void SetUp() override {
    lz::set_jit(true);
    lz::set_jit_strict(true);
  }
  void TearDown() override { lz::set_jit_strict(false); }
};

// Thresholds of exp in float32: above kOverflow the result is inf, below kSubnormal it is
// subnormal, below kUnderflow it rounds to 0.
constexpr float kOverflow = 88.7228394f;
constexpr float kSubnormal = -87.3365479f;
constexpr float kUnderflow = -103.972084f;

TEST_F(MathFunctionsTest, ExpIsWithinTwoUlpsEverywhere) {
  constexpr int64_t kBound = 2;
  expect_within_ulps(kExp, "evenly spaced [-104, 89]", evenly_spaced(-104, 89), kBound);
  expect_within_ulps(kExp, "evenly spaced [-1, 1]", evenly_spaced(-1, 1), kBound);
  expect_within_ulps(kExp, "random bits, every finite float", random_bits(-kInfinity, kInfinity, 1),
                     kBound);
  expect_within_ulps(kExp, "random bits in [-104, 89]", random_bits(-104, 89, 2), kBound);
  expect_within_ulps(kExp, "subnormal results [-103.98, -87.33]", evenly_spaced(-103.98, -87.33),
                     kBound);
  expect_within_ulps(kExp, "around the thresholds 88.72, -87.34, -103.97, 0",
                     concatenate({around(kOverflow), around(kSubnormal), around(kUnderflow),
                                  around(0.0f), around(-0.0f)}),
                     kBound);
  expect_within_ulps(kExp, "powers of two and subnormals",
                     concatenate({powers_of_two(), subnormals(3)}), kBound);
}

TEST_F(MathFunctionsTest, LogIsWithinTwoUlpsEverywhere) {
  constexpr int64_t kBound = 2;
  expect_within_ulps(kLog, "evenly spaced (0, 16]", evenly_spaced(0x1p-20, 16), kBound);
  expect_within_ulps(kLog, "evenly spaced [0.5, 2]", evenly_spaced(0.5, 2), kBound);
  expect_within_ulps(kLog, "random bits, every positive finite float", random_bits(0, kInfinity, 4),
                     kBound);
  expect_within_ulps(kLog, "random bits, negative floats are NaN",
                     random_bits(-kInfinity, -0.0f, 5), 0);
  expect_within_ulps(kLog, "around 1, sqrt(1/2), the smallest normal, the largest float",
                     concatenate({around(1.0f), around(std::numbers::sqrt2_v<float> / 2),
                                  around(std::numeric_limits<float>::min()),
                                  around(std::numeric_limits<float>::max())}),
                     kBound);
  expect_within_ulps(kLog, "powers of two and subnormals",
                     concatenate({powers_of_two(0, kInfinity), subnormals(6)}), kBound);
}

TEST_F(MathFunctionsTest, SinAndCosAreWithinTwoUlpsBelow2To49EvenNearTheirZeros) {
  constexpr int64_t kBound = 2;
  constexpr float kLimit = 0x1p49f;
  const double two_pi = 2 * std::numbers::pi;
  uint32_t seed = 7;
  for (const MathFunction& function : {kSin, kCos}) {
    expect_within_ulps(function, "evenly spaced [-2 pi, 2 pi]", evenly_spaced(-two_pi, two_pi),
                       kBound);
    expect_within_ulps(function, "evenly spaced [-1e6, 1e6]", evenly_spaced(-1e6, 1e6), kBound);
    expect_within_ulps(function, "random bits in [-2^49, 2^49]",
                       random_bits(-kLimit, kLimit, ++seed), kBound);
    expect_within_ulps(function, "nearest floats to every k pi/2 up to 1e6",
                       near_every_half_pi_multiple(1e6), kBound);
    expect_within_ulps(function, "nearest floats to random k pi/2 up to 2^49",
                       near_random_half_pi_multiples(kLimit, ++seed), kBound);
    expect_within_ulps(function, "powers of two up to 2^49 and subnormals",
                       concatenate({powers_of_two(-kLimit, kLimit), subnormals(++seed)}), kBound);
  }
}

TEST_F(MathFunctionsTest, SinAndCosOfHugeFiniteFloatsStayWithinOne) {
  std::vector<float> huge = random_bits(-kInfinity, kInfinity, 20);
  std::erase_if(huge, [](float x) { return std::abs(x) < 0x1p49f; });
  const std::vector<float> extremes = {
      std::numeric_limits<float>::max(), 0x1p127f, 0x1p100f, 0x1p60f, 1e16f, 1e20f, 3e38f};
  for (const float x : extremes) {
    huge.push_back(x);
    huge.push_back(-x);
  }
  for (const MathFunction& function : {kSin, kCos}) {
    const std::vector<float> got = evaluate(function, huge);
    size_t outside = 0;
    float first = 0;
    for (size_t i = 0; i < huge.size(); ++i) {
      if (!(std::abs(got[i]) <= 1) && outside++ == 0) first = huge[i];
    }
    EXPECT_EQ(outside, 0u) << function.name << " is NaN or beyond [-1, 1] for " << outside << " of "
                           << huge.size() << " huge floats, first " << describe(first);
  }
}

TEST_F(MathFunctionsTest, TanhIsWithinTwoUlpsEverywhere) {
  constexpr int64_t kBound = 2;
  expect_within_ulps(kTanh, "evenly spaced [-10, 10]", evenly_spaced(-10, 10), kBound);
  expect_within_ulps(kTanh, "evenly spaced [-1, 1]", evenly_spaced(-1, 1), kBound);
  expect_within_ulps(kTanh, "random bits, every finite float",
                     random_bits(-kInfinity, kInfinity, 10), kBound);
  expect_within_ulps(
      kTanh, "around +-0.625 (where the formula switches), 0",
      concatenate({around(0.625f, 1 << 16), around(-0.625f, 1 << 16), around(0.0f), around(-0.0f)}),
      kBound);
  expect_within_ulps(kTanh, "evenly spaced [9, 100] (result rounds to 1)", evenly_spaced(9, 100),
                     0);
  expect_within_ulps(kTanh, "powers of two and subnormals",
                     concatenate({powers_of_two(), subnormals(11)}), kBound);
}

// sigmoid is 1 / (1 + e) or e / (1 + e) with e = exp(-|x|) from the inline exp, which never
// overflows, so the bound holds down to the subnormal results of large negative x.
TEST_F(MathFunctionsTest, SigmoidIsWithinThreeUlpsEverywhere) {
  constexpr int64_t kBound = 3;
  expect_within_ulps(kSigmoid, "evenly spaced [-110, 20]", evenly_spaced(-110, 20), kBound);
  expect_within_ulps(kSigmoid, "random bits in (-inf, inf)", random_bits(-kInfinity, kInfinity, 12),
                     kBound);
}

// ---- Special values --------------------------------------------------------------------------

/// The result for `input` must have exactly the bits of `want` (any NaN for a NaN).
void expect_exact(const MathFunction& function, float input, float want) {
  const float got = evaluate(function, {input})[0];
  if (std::isnan(want)) {
    EXPECT_TRUE(std::isnan(got)) << function.name << "(" << input << ") = " << got << ", want NaN";
  } else {
    EXPECT_EQ(std::bit_cast<uint32_t>(got), std::bit_cast<uint32_t>(want))
        << function.name << "(" << describe(input) << ") = " << describe(got) << ", want "
        << describe(want);
  }
}

TEST_F(MathFunctionsTest, SpecialValuesAreExactIncludingTheSignOfZero) {
  const float max = std::numeric_limits<float>::max();
  for (const auto& [input, want] : std::vector<std::pair<float, float>>{{0.0f, 1},
                                                                        {-0.0f, 1},
                                                                        {kInfinity, kInfinity},
                                                                        {-kInfinity, 0},
                                                                        {kNaN, kNaN},
                                                                        {max, kInfinity},
                                                                        {-max, 0},
                                                                        {100, kInfinity},
                                                                        {-104, 0}}) {
    expect_exact(kExp, input, want);
  }
  for (const auto& [input, want] :
       std::vector<std::pair<float, float>>{{1, 0},
                                            {0.0f, -kInfinity},
                                            {-0.0f, -kInfinity},
                                            {-1, kNaN},
                                            {-kInfinity, kNaN},
                                            {kInfinity, kInfinity},
                                            {kNaN, kNaN},
                                            {-std::numeric_limits<float>::denorm_min(), kNaN}}) {
    expect_exact(kLog, input, want);
  }
  for (const auto& [input, want] : std::vector<std::pair<float, float>>{
           {0.0f, 0.0f}, {-0.0f, -0.0f}, {kInfinity, kNaN}, {-kInfinity, kNaN}, {kNaN, kNaN}}) {
    expect_exact(kSin, input, want);
  }
  for (const auto& [input, want] : std::vector<std::pair<float, float>>{
           {0.0f, 1}, {-0.0f, 1}, {kInfinity, kNaN}, {-kInfinity, kNaN}, {kNaN, kNaN}}) {
    expect_exact(kCos, input, want);
  }
  for (const auto& [input, want] : std::vector<std::pair<float, float>>{{0.0f, 0.0f},
                                                                        {-0.0f, -0.0f},
                                                                        {kInfinity, 1},
                                                                        {-kInfinity, -1},
                                                                        {kNaN, kNaN},
                                                                        {max, 1},
                                                                        {-max, -1}}) {
    expect_exact(kTanh, input, want);
  }
  for (const auto& [input, want] : std::vector<std::pair<float, float>>{
           {0.0f, 0.5f}, {kInfinity, 1}, {-kInfinity, 0}, {kNaN, kNaN}}) {
    expect_exact(kSigmoid, input, want);
  }
}

}  // namespace
