// The device code every generated CUDA translation unit starts with: element types, wrapping
// integer arithmetic, conversions and the counter-based random numbers, written to compute what
// the interpreter computes (reference/interpreter_internal.h, reference/counter_rng.h).
#pragma once

#include <string_view>

namespace lz::codegen::cuda {

/// CUDA C++ defining the helpers that generated kernels call (all `lz_`-prefixed). It includes
/// no header, so NVRTC compiles it without the CUDA toolkit's include directory.
std::string_view device_preamble();

}  // namespace lz::codegen::cuda
