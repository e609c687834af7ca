// Checks lz::grad against central finite differences in float64, through the public API only.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <lazuli/lazuli.h>

namespace lz::testing {

/// A float64 argument of the function under test: its shape and values.
struct Argument {
  Shape shape;
  std::vector<double> values;
};

/// An argument of `shape` with values drawn uniformly from [low, high), at least `gap` away from
/// every value in `avoid` (the kinks of relu, abs, max: finite differences across one are wrong).
inline Argument random_argument(Shape shape, uint32_t seed, double low = -2, double high = 2,
                                std::vector<double> avoid = {0}, double gap = 0.05) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<double> uniform(low, high);
  Argument argument{shape, {}};
  for (int64_t i = 0; i < shape_size(shape); ++i) {
    double value = uniform(generator);
    for (bool near = true; near;) {
      near = false;
      for (double kink : avoid) near = near || std::abs(value - kink) < gap;
      if (near) value = uniform(generator);
    }
    argument.values.push_back(value);
  }
  return argument;
}

inline std::vector<Tensor> tensors_of(const std::vector<Argument>& arguments) {
  std::vector<Tensor> tensors;
  for (const Argument& argument : arguments) {
    tensors.push_back(from_vector(argument.values, argument.shape));
  }
  return tensors;
}

/// Expects lz::grad(f) at `arguments` to equal central differences of f's value, element by
/// element: (f(x + h) - f(x - h)) / 2h, relative to the larger of 1 and the gradient's size.
inline void expect_gradient_matches_finite_differences(const ScalarFunction& f,
                                                       const std::vector<Argument>& arguments,
                                                       double tolerance = 1e-6) {
  const std::vector<Tensor> grads = grad(f, tensors_of(arguments));
  ASSERT_EQ(grads.size(), arguments.size());
  const double h = 1e-6;
  for (size_t i = 0; i < arguments.size(); ++i) {
    ASSERT_EQ(grads[i].shape(), arguments[i].shape) << "gradient " << i;
    ASSERT_EQ(grads[i].dtype(), float64) << "gradient " << i;
    const std::vector<double> analytic = grads[i].to_vector<double>();
    for (size_t j = 0; j < arguments[i].values.size(); ++j) {
      std::vector<Argument> shifted = arguments;
      shifted[i].values[j] = arguments[i].values[j] + h;
      const double above = f(tensors_of(shifted)).item<double>();
      shifted[i].values[j] = arguments[i].values[j] - h;
      const double below = f(tensors_of(shifted)).item<double>();
      const double numeric = (above - below) / (2 * h);
      EXPECT_NEAR(analytic[j], numeric, tolerance * std::max(1.0, std::abs(numeric)))
          << "d f / d argument " << i << "[" << j << "]";
    }
  }
}

}  // namespace lz::testing
