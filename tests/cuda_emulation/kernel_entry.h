// What the fake NVRTC (nvrtc.cpp) adds to a program's translation unit for each __global__
// function: LZ_EMULATED_ENTRY(name) defines `name`_lz_thread, one emulated thread of the entry
// (an EntryThread of tests/codegen/cuda_host_emulation.h), and `name`_lz_parameters, the size and
// alignment of each parameter, which the fake driver needs to copy the values of a launch's
// parameters when cuLaunchKernel is called, as CUDA does.
//
// The parameter types come from the entry's own type (template deduction), not from parsing its
// source text: only the entry's name is taken from the text.
#pragma once

#include <cstddef>
#include <type_traits>
#include <utility>

#include "tests/codegen/cuda_host_emulation.h"

namespace lz::cuda_emulation {

/// The parameters of an entry, in order.
struct EntryParameters {
  std::size_t count;
  const std::size_t* sizes;
  const std::size_t* alignments;
};

template <class... Parameters>
struct ParameterLayout {
  // One trailing element, so that an entry without parameters still has arrays.
  static constexpr std::size_t kSizes[] = {sizeof(Parameters)..., 0};
  static constexpr std::size_t kAlignments[] = {alignof(Parameters)..., 0};
};

template <class... Parameters>
constexpr EntryParameters parameters_of(void (*)(Parameters...)) {
  return {sizeof...(Parameters), ParameterLayout<Parameters...>::kSizes,
          ParameterLayout<Parameters...>::kAlignments};
}

/// Calls `entry` with the parameter values that `values[i]` point to (cuLaunchKernel's
/// kernelParams, copied by the fake driver).
template <class... Parameters>
void call_entry(void (*entry)(Parameters...), void* const* values) {
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    entry(*static_cast<std::remove_cv_t<Parameters>*>(values[I])...);
  }
  (std::index_sequence_for<Parameters...>{});
}

}  // namespace lz::cuda_emulation

/// One emulated thread of entry `name` and its parameter layout, under C names the fake driver
/// looks up (cuModuleGetFunction). The launch's parameter values come as EntryArguments::buffers.
#define LZ_EMULATED_ENTRY(name)                                                             \
  extern "C" void name##_lz_thread(const ::lz::cuda_emulation::ThreadState* thread,         \
                                   const ::lz::cuda_emulation::EntryArguments* arguments) { \
    const ::lz::cuda_emulation::ThreadScope scope(*thread);                                 \
    ::lz::cuda_emulation::call_entry(name, arguments->buffers);                             \
  }                                                                                         \
  extern "C" const ::lz::cuda_emulation::EntryParameters name##_lz_parameters =             \
      ::lz::cuda_emulation::parameters_of(name);
