// Files of lazuli embedded as text at build time (cmake/embed_source.cmake), for NVRTC.
#pragma once

#include <string_view>

namespace lz::codegen::cuda {

/// reference/counter_rng.h: the random numbers, compiled into every CUDA kernel's preamble.
extern const std::string_view kCounterRngSource;
/// reference/scalar_semantics.h: wrapping integers, conversions, NaN rules, rounded random
/// numbers; embedded after kCounterRngSource, which it builds on.
extern const std::string_view kScalarSemanticsSource;

}  // namespace lz::codegen::cuda
