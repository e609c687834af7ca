// Files of lazuli embedded as text at build time (cmake/embed_source.cmake), for NVRTC.
#pragma once

#include <string_view>

namespace lz::codegen::cuda {

/// reference/counter_rng.h: the random numbers, compiled into every CUDA kernel's preamble.
extern const std::string_view kCounterRngSource;

}  // namespace lz::codegen::cuda
