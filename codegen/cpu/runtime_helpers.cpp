#include "codegen/cpu/runtime_helpers.h"

#include <cmath>
#include <cstdint>
#include <cstring>

#include "reference/scalar_semantics.h"

namespace {

using lz::reference::integer_pow;
using lz::reference::uniform_element_as;

template <class T>
T random_uniform(uint64_t seed, int64_t i, double low, double high) {
  return uniform_element_as<T>(seed, static_cast<uint64_t>(i), low, high);
}

template <class Function>
void* address(Function* function) {
  return reinterpret_cast<void*>(function);
}

}  // namespace

namespace lz::codegen {

std::span<const RuntimeSymbol> runtime_symbols() {
  using Real = double(double);
  static const RuntimeSymbol symbols[] = {
      {"lz_random_uniform_f32", address(&random_uniform<float>)},
      {"lz_random_uniform_f64", address(&random_uniform<double>)},
      {"lz_random_uniform_i32", address(&random_uniform<int32_t>)},
      {"lz_random_uniform_i64", address(&random_uniform<int64_t>)},
      {"lz_integer_pow_i32", address(&integer_pow<int32_t>)},
      {"lz_integer_pow_i64", address(&integer_pow<int64_t>)},
      {"exp", address(static_cast<Real*>(&std::exp))},
      {"log", address(static_cast<Real*>(&std::log))},
      {"sin", address(static_cast<Real*>(&std::sin))},
      {"cos", address(static_cast<Real*>(&std::cos))},
      {"tanh", address(static_cast<Real*>(&std::tanh))},
      {"pow", address(static_cast<double (*)(double, double)>(&std::pow))},
      {"memset", address(&std::memset)},
      {"memcpy", address(&std::memcpy)},
      {"memmove", address(&std::memmove)},
  };
  return symbols;
}

}  // namespace lz::codegen
