// lz::dist's data-parallel training helpers: recorded ops and collectives over the public API.
#include <utility>

#include "frontend/recording.h"
#include "lazuli/dist.h"
#include "lazuli/error.h"

namespace lz::dist {
namespace {

/// The gradients at `bucket` (indices into `gradients`, of one dtype) averaged over the ranks
/// through one all_reduce of them joined end to end, each put back in its slot of `averaged`.
void average_bucket(const std::vector<Tensor>& gradients, const std::vector<size_t>& bucket,
                    std::vector<Tensor>& averaged, std::source_location loc) {
  if (bucket.size() == 1) {
    averaged[bucket[0]] = all_reduce(gradients[bucket[0]], ReduceOp::Mean, loc);
    return;
  }
  std::vector<Tensor> flat;
  flat.reserve(bucket.size());
  for (size_t index : bucket) flat.push_back(reshape(gradients[index], {-1}, loc));
  const Tensor joined = all_reduce(concatenate(flat, 0, loc), ReduceOp::Mean, loc);
  int64_t offset = 0;
  for (size_t index : bucket) {
    const Tensor& gradient = gradients[index];
    const int64_t size = shape_size(gradient.shape());
    averaged[index] =
        reshape(slice(joined, {offset}, {offset + size}, {}, loc), gradient.shape(), loc);
    offset += size;
  }
}

}  // namespace

std::vector<Tensor> broadcast_parameters(const std::vector<Tensor>& parameters, int root,
                                         std::source_location loc) {
  std::vector<Tensor> broadcast_values;
  broadcast_values.reserve(parameters.size());
  for (const Tensor& parameter : parameters) {
    broadcast_values.push_back(broadcast(parameter, root, loc));
  }
  return broadcast_values;
}

std::vector<Tensor> average_gradients(const std::vector<Tensor>& gradients, int64_t bucket_bytes,
                                      std::source_location loc) try {
  if (bucket_bytes < 1) {
    throw Error("[average_gradients] bucket_bytes must be >= 1, got " +
                std::to_string(bucket_bytes));
  }
  std::vector<Tensor> averaged(gradients.size());
  std::vector<size_t> bucket;
  int64_t bytes = 0;
  for (size_t i = gradients.size(); i-- > 0;) {
    const Tensor& gradient = gradients[i];
    frontend::node_of(gradient, "average_gradients");  // an empty handle is an error here
    if (!bucket.empty() && gradients[bucket.back()].dtype() != gradient.dtype()) {
      average_bucket(gradients, bucket, averaged, loc);
      bucket.clear();
      bytes = 0;
    }
    bucket.push_back(i);
    bytes += shape_size(gradient.shape()) * dtype_size(gradient.dtype());
    if (bytes >= bucket_bytes) {
      average_bucket(gradients, bucket, averaged, loc);
      bucket.clear();
      bytes = 0;
    }
  }
  if (!bucket.empty()) average_bucket(gradients, bucket, averaged, loc);
  return averaged;
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

ValueAndGrad value_and_grad(const ScalarFunction& f, const std::vector<Tensor>& params,
                            int64_t bucket_bytes, std::source_location loc) {
  ValueAndGrad local = lz::value_and_grad(f, params, loc);
  return {std::move(local.value), average_gradients(local.grads, bucket_bytes, loc)};
}

Moments moments(const Tensor& x, Axes axes, bool keepdims, std::source_location loc) try {
  const Tensor local_sum = sum(x, axes, /*keepdims=*/true, loc);
  const int64_t reduced = shape_size(local_sum.shape()) == 0
                              ? 0
                              : shape_size(x.shape()) / shape_size(local_sum.shape());
  const double count = static_cast<double>(reduced) * world_size(loc);
  const Tensor mean = Traced(all_reduce(local_sum, ReduceOp::Sum, loc), loc) / count;
  const Tensor deviations = sum(square(Traced(x, loc) - mean, loc), axes, /*keepdims=*/true, loc);
  const Tensor variance = Traced(all_reduce(deviations, ReduceOp::Sum, loc), loc) / count;
  if (keepdims) return {mean, variance};
  // The reduced axes are the size-1 axes left (all of them when no axes were given).
  return {squeeze(mean, axes.list(), loc), squeeze(variance, axes.list(), loc)};
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

}  // namespace lz::dist
