// Creation ops: leaves of the graph.
#include <cmath>

#include "frontend/recording.h"
#include "ir/type_inference.h"
#include "lazuli/error.h"

namespace lz {
namespace {

using frontend::check_shape;
using frontend::make_node;
using frontend::record;
using ir::Op;

}  // namespace

Tensor full(Shape shape, double value, DType dtype, std::source_location loc) try {
  check_shape("full", shape);
  ir::NodePtr node = make_node(Op::Full, {}, loc);
  node->dtype = dtype;
  node->scalar_constant = shape.empty();
  node->shape = std::move(shape);
  if (dtype == bool_) {
    node->params[0] = ir::ScalarParam::of_integer(value != 0);
  } else {
    node->params[0] = frontend::scalar_param("full", value, dtype);
  }
  return record(std::move(node));
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

Tensor zeros(Shape shape, DType dtype, std::source_location loc) try {
  check_shape("zeros", shape);
  return full(std::move(shape), 0, dtype, loc);
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

Tensor ones(Shape shape, DType dtype, std::source_location loc) try {
  check_shape("ones", shape);
  return full(std::move(shape), 1, dtype, loc);
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

Tensor arange(double start, double stop, double step, DType dtype, std::source_location loc) try {
  if (step == 0 || !std::isfinite(start) || !std::isfinite(stop) || !std::isfinite(step)) {
    throw Error(
        "[arange] needs finite bounds and a non-zero step, got start=" + std::to_string(start) +
        ", stop=" + std::to_string(stop) + ", step=" + std::to_string(step));
  }
  if (dtype == bool_) throw Error("[arange] cannot produce bool; use an int or float dtype");
  const double count = std::ceil((stop - start) / step);
  if (count > 0x1p62) throw Error("[arange] " + std::to_string(count) + " elements is too many");
  ir::NodePtr node = make_node(Op::Arange, {}, loc);
  node->dtype = dtype;
  node->shape = {count > 0 ? static_cast<int64_t>(count) : 0};
  node->params[0] = frontend::scalar_param("arange", start, dtype);
  node->params[1] = frontend::scalar_param("arange", step, dtype);
  if (!is_floating(dtype) && node->params[1].integer == 0) {
    throw Error("[arange] step " + std::to_string(step) + " truncates to 0 for " +
                dtype_name(dtype));
  }
  if (!is_floating(dtype) && count > 1) {
    // The last value must fit the dtype too, not only the start and the step.
    frontend::scalar_param("arange", start + (count - 1) * step, dtype);
  }
  return record(std::move(node));
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

Tensor random_uniform(Shape shape, uint64_t seed, double low, double high, DType dtype,
                      std::source_location loc) try {
  check_shape("random_uniform", shape);
  if (dtype == bool_)
    throw Error("[random_uniform] cannot produce bool; use an int or float dtype");
  if (!(low <= high) || !std::isfinite(high - low)) {
    throw Error("[random_uniform] needs finite bounds with low <= high, got low=" +
                std::to_string(low) + ", high=" + std::to_string(high));
  }
  ir::NodePtr node = make_node(Op::RandomUniform, {}, loc);
  node->dtype = dtype;
  node->shape = std::move(shape);
  node->seed = seed;
  node->params[0] = ir::ScalarParam::of(low);
  node->params[1] = ir::ScalarParam::of(high);
  return record(std::move(node));
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

Tensor random_normal(Shape shape, uint64_t seed, double mean, double std, DType dtype,
                     std::source_location loc) try {
  check_shape("random_normal", shape);
  if (!std::isfinite(mean) || !std::isfinite(std)) {
    throw Error("[random_normal] needs a finite mean and standard deviation, got mean=" +
                std::to_string(mean) + ", std=" + std::to_string(std));
  }
  ir::NodePtr node = make_node(Op::RandomNormal, {}, loc);
  node->dtype = dtype;
  node->shape = std::move(shape);
  node->seed = seed;
  node->params[0] = ir::ScalarParam::of(mean);
  node->params[1] = ir::ScalarParam::of(std);
  return record(std::move(node));
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

}  // namespace lz
