// The one exception type lazuli throws.
#pragma once

#include <stdexcept>
#include <string>

namespace lz {

/// Every error lazuli raises. Messages start with the op in brackets and name the shapes and
/// dtypes involved, e.g. "[add] shapes (3,4) and (5) cannot be broadcast".
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace lz
