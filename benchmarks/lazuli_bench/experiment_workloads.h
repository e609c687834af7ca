// Workloads that the async and cuda suites both time, with their checks: a square matmul checked
// at sampled entries of its product, and steps of x = exp(log(x)) + 1 whose result is known.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <lazuli/lazuli.h>

#include "report.h"

namespace lazuli_bench {

/// Entries of a matmul's result checked against double-precision dot products.
inline constexpr int kMatmulCheckedEntries = 64;
/// Units x = exp(log(x)) + 1 per step.
inline constexpr int kUnitsPerStep = 16;

/// kMatmulCheckedEntries row-major indices into a side x side result, spread over all of it.
std::vector<int64_t> sampled_entries(int64_t side);

/// The `entries` of a @ b (both side x side, row-major), each a double-precision dot product.
std::vector<float> sampled_products(const std::vector<float>& a, const std::vector<float>& b,
                                    int64_t side, const std::vector<int64_t>& entries);

/// The `entries` of `values`.
std::vector<float> sampled(const std::vector<float>& values, const std::vector<int64_t>& entries);

/// Records one step, x = exp(log(x)) + 1 kUnitsPerStep times, and launches it on x's device and
/// the calling thread's stream. The transcendental functions make each kernel's compute, not its
/// recording and launch, dominate; their round trip keeps the result known: x + kUnitsPerStep.
void launch_step(lz::Tensor& x);

/// Checks `results`, each `elements` values 1 + i / elements before `steps` steps, into `row`;
/// `remark` follows an "ok".
void check_steps(Row& row, const std::vector<lz::Tensor>& results, int64_t elements, int64_t steps,
                 const std::string& remark = "");

}  // namespace lazuli_bench
