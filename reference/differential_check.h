// The random inputs and the output comparison of differential checking: `lazuli-opt --run` and the
// differential fuzzer (tests/passes/differential_fuzz_test.cpp) both fill data leaves and compare
// an optimized run against the reference interpreter with these functions, so that a failure the
// fuzzer prints replays in lazuli-opt with the same values and the same verdict.
#pragma once

#include <cstdint>
#include <string>

#include "ir/graph.h"
#include "lazuli/dtype.h"
#include "memory/buffer.h"

namespace lz::reference {

/// Gives every data leaf of `graph` without a buffer random values: element i of the leaf at
/// position p (%p in printed IR) comes from random_bits(random_bits(seed, p), i), as floats uniform
/// in [-2,2), integers uniform in [-5,5) and bools the parity of the 64 bits.
void fill_data_leaves(const ir::Graph& graph, uint64_t seed);

/// The rounding a compared value carries: its dtype's, or float32's for a float64 value computed
/// from float32 values (an astype after a float32 exp, whose last bit the JIT and the
/// interpreter may round differently, carries that difference into float64).
enum class Precision { OfDtype, Float32 };

/// Precision::Float32 when a float32 value feeds `output` (its inputs walked without recursion,
/// up to data leaves and evaluated nodes), else Precision::OfDtype.
Precision precision_of(const ir::Node& output);

/// Compares an output of the optimized run with the reference's, element by element: f32, and
/// f64 of Precision::Float32, within rtol 1e-5 / atol 1e-6; f64 within rtol 1e-12 / atol 1e-12;
/// other dtypes exactly; NaN matches NaN. Returns "" when they agree, else a description of the
/// differences that names the first differing index within `shape`. A null buffer or a dtype or
/// size mismatch is a difference.
std::string compare_buffers(const memory::Buffer* reference, const memory::Buffer* optimized,
                            const Shape& shape, Precision precision = Precision::OfDtype);

}  // namespace lz::reference
