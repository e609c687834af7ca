// Libraries lazuli loads at run time instead of linking (the CUDA driver, NVRTC, cuBLAS, NCCL),
// so that it builds and runs where they are missing: each is looked up by name when first
// needed, stays loaded for the life of the process, and its entry points are found by symbol.
#pragma once

#include <initializer_list>
#include <string>

namespace lz::support {

/// The first of `names` that loads (a file name the dynamic loader searches for, or a path),
/// its name in `loaded` when given; or null with `why`: "cannot load <the first name>: " and
/// what each attempt said.
void* load_library(std::initializer_list<const char*> names, std::string& why,
                   std::string* loaded = nullptr);

/// The address of `symbol` in `library`, or null.
void* find_symbol(void* library, const char* symbol);

/// Sets `entry` to `library`'s `symbol`; false, with `why` naming `library_name` and the symbol,
/// when the library lacks it.
template <class Function>
bool resolve_symbol(void* library, const char* library_name, const char* symbol, Function& entry,
                    std::string& why) {
  entry = reinterpret_cast<Function>(find_symbol(library, symbol));
  if (entry == nullptr) why = std::string(library_name) + " has no " + symbol;
  return entry != nullptr;
}

}  // namespace lz::support
