// Parameter initializers: random_uniform and random_normal scaled by a weight's fans.
#include <cmath>
#include <string>

#include "frontend/recording.h"
#include "lazuli/error.h"
#include "lazuli/nn.h"

namespace lz::nn {
namespace {

struct Fans {
  double in = 0;
  double out = 0;
};

Fans fans_of(std::string_view op, const Shape& shape) {
  frontend::check_shape(op, shape);
  if (shape.empty() || shape_size(shape) == 0) {
    throw Error("[" + std::string(op) + "] needs a weight with elements, got shape " +
                shape_string(shape));
  }
  if (shape.size() == 1) return {static_cast<double>(shape[0]), static_cast<double>(shape[0])};
  return {static_cast<double>(shape_size(shape) / shape.back()), static_cast<double>(shape.back())};
}

void check_floating(std::string_view op, DType dtype) {
  if (!is_floating(dtype)) {
    throw Error("[" + std::string(op) + "] draws float32 or float64 values, got dtype " +
                std::string(dtype_name(dtype)));
  }
}

Tensor uniform(std::string_view op, Shape shape, uint64_t seed, DType dtype, double bound,
               std::source_location loc) {
  check_floating(op, dtype);
  return random_uniform(std::move(shape), seed, -bound, bound, dtype, loc);
}

Tensor normal(std::string_view op, Shape shape, uint64_t seed, DType dtype, double deviation,
              std::source_location loc) {
  check_floating(op, dtype);
  return random_normal(std::move(shape), seed, 0, deviation, dtype, loc);
}

}  // namespace

Tensor glorot_uniform(Shape shape, uint64_t seed, DType dtype, std::source_location loc) try {
  const Fans fans = fans_of("glorot_uniform", shape);
  return uniform("glorot_uniform", std::move(shape), seed, dtype,
                 std::sqrt(6 / (fans.in + fans.out)), loc);
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

Tensor glorot_normal(Shape shape, uint64_t seed, DType dtype, std::source_location loc) try {
  const Fans fans = fans_of("glorot_normal", shape);
  return normal("glorot_normal", std::move(shape), seed, dtype, std::sqrt(2 / (fans.in + fans.out)),
                loc);
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

Tensor he_uniform(Shape shape, uint64_t seed, DType dtype, std::source_location loc) try {
  const Fans fans = fans_of("he_uniform", shape);
  return uniform("he_uniform", std::move(shape), seed, dtype, std::sqrt(6 / fans.in), loc);
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

Tensor he_normal(Shape shape, uint64_t seed, DType dtype, std::source_location loc) try {
  const Fans fans = fans_of("he_normal", shape);
  return normal("he_normal", std::move(shape), seed, dtype, std::sqrt(2 / fans.in), loc);
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

}  // namespace lz::nn
