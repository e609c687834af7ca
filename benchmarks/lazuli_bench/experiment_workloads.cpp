#include "experiment_workloads.h"

#include "experiment.h"

namespace lazuli_bench {

std::vector<int64_t> sampled_entries(int64_t side) {
  // Rows and columns stepped by primes, so the entries spread over the whole result.
  std::vector<int64_t> entries;
  for (int64_t i = 0; i < kMatmulCheckedEntries; ++i) {
    entries.push_back((i * 7919 % side) * side + i * 104729 % side);
  }
  return entries;
}

std::vector<float> sampled_products(const std::vector<float>& a, const std::vector<float>& b,
                                    int64_t side, const std::vector<int64_t>& entries) {
  std::vector<float> products;
  for (const int64_t entry : entries) {
    const int64_t row = entry / side;
    const int64_t column = entry % side;
    double sum = 0;
    for (int64_t k = 0; k < side; ++k) {
      sum += static_cast<double>(a[row * side + k]) * b[k * side + column];
    }
    products.push_back(static_cast<float>(sum));
  }
  return products;
}

std::vector<float> sampled(const std::vector<float>& values, const std::vector<int64_t>& entries) {
  std::vector<float> picked;
  for (const int64_t entry : entries) picked.push_back(values[entry]);
  return picked;
}

void launch_step(lz::Tensor& x) {
  for (int unit = 0; unit < kUnitsPerStep; ++unit) x = lz::exp(lz::log(x)) + 1;
  x.eval_async();
}

void check_steps(Row& row, const std::vector<lz::Tensor>& results, int64_t elements, int64_t steps,
                 const std::string& remark) {
  const auto n = static_cast<float>(elements);
  const auto added = static_cast<float>(steps * kUnitsPerStep);
  std::vector<float> expected;
  std::vector<float> actual;
  for (const lz::Tensor& result : results) {
    const std::vector<float> values = result.to_vector<float>();
    actual.insert(actual.end(), values.begin(), values.end());
    for (int64_t i = 0; i < elements; ++i) {
      expected.push_back(1 + static_cast<float>(i) / n + added);
    }
  }
  check(row, actual, expected, remark);
}

}  // namespace lazuli_bench
