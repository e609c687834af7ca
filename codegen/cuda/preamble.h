// The device code every generated CUDA translation unit starts with: element types, wrapping
// integer arithmetic, conversions and the counter-based random numbers (reference/counter_rng.h
// itself, embedded at build time; the rest written to compute what
// reference/interpreter_internal.h computes).
#pragma once

#include <string_view>

namespace lz::codegen::cuda {

/// CUDA C++ defining the helpers that generated kernels call (`lz_`-prefixed, and
/// lz::reference's random numbers). Under NVRTC it includes no header, so NVRTC compiles it
/// without the CUDA toolkit's include directory.
std::string_view device_preamble();

}  // namespace lz::codegen::cuda
