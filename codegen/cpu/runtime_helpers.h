// Functions that generated kernels call by name: the random number definitions and integer
// power shared with the interpreter (so both produce identical values), and libm for the scalar
// float64 transcendentals (outside vectorized loops, and tanh). The JIT binds these names to these
// addresses; libmvec's vector functions come from the process (codegen/cpu/jit.cpp).
#pragma once

#include <span>

namespace lz::codegen {

struct RuntimeSymbol {
  const char* name;
  void* address;
};

/// Every symbol generated code may call.
std::span<const RuntimeSymbol> runtime_symbols();

}  // namespace lz::codegen
