#include "support/shared_library.h"

#include <dlfcn.h>

namespace lz::support {

void* load_library(std::initializer_list<const char*> names, std::string& why,
                   std::string* loaded) {
  std::string tried;
  for (const char* name : names) {
    if (void* library = dlopen(name, RTLD_NOW | RTLD_LOCAL)) {
      if (loaded != nullptr) *loaded = name;
      return library;
    }
    const char* error = dlerror();
    tried += (tried.empty() ? "" : "; ") + std::string(error != nullptr ? error : name);
  }
  why = "cannot load " + std::string(*names.begin()) + ": " + tried;
  return nullptr;
}

void* find_symbol(void* library, const char* symbol) { return dlsym(library, symbol); }

}  // namespace lz::support
