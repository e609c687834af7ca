// A linear layer and a multilayer perceptron over explicit parameters.
#include <string>

#include "frontend/recording.h"
#include "lazuli/error.h"
#include "lazuli/nn.h"

namespace lz::nn {

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias,
              std::source_location loc) try {
  const Shape& w = frontend::node_of(weight, "linear")->shape;
  const Shape& b = frontend::node_of(bias, "linear")->shape;
  if (w.size() != 2 || b != Shape{w[1]}) {
    throw Error("[linear] needs a weight (in, out) and a bias (out), got weight " +
                shape_string(w) + " and bias " + shape_string(b));
  }
  return Traced(matmul(x, weight, loc), loc) + bias;
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

std::vector<Tensor> mlp_parameters(const std::vector<int64_t>& sizes, uint64_t seed, DType dtype,
                                   std::source_location loc) try {
  if (sizes.size() < 2) {
    throw Error("[mlp_parameters] needs at least an input and an output size, got " +
                std::to_string(sizes.size()) + " sizes");
  }
  std::vector<Tensor> parameters;
  for (size_t layer = 0; layer + 1 < sizes.size(); ++layer) {
    parameters.push_back(he_normal({sizes[layer], sizes[layer + 1]}, seed + layer, dtype, loc));
    parameters.push_back(zeros({sizes[layer + 1]}, dtype, loc));
  }
  return parameters;
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

Tensor mlp(const std::vector<Tensor>& parameters, const Tensor& x, std::source_location loc) try {
  if (parameters.empty() || parameters.size() % 2 != 0) {
    throw Error("[mlp] needs a weight and a bias per layer, got " +
                std::to_string(parameters.size()) + " parameters");
  }
  Tensor h = x;
  for (size_t i = 0; i < parameters.size(); i += 2) {
    h = linear(h, parameters[i], parameters[i + 1], loc);
    if (i + 2 < parameters.size()) h = relu(h, loc);
  }
  return h;
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

}  // namespace lz::nn
