// The one exception type lazuli throws.
#pragma once

#include <optional>
#include <source_location>
#include <stdexcept>
#include <string>

namespace lz {

/// Every error lazuli raises. Messages start with the op in brackets, name the line of the user's
/// code the error is about, and the shapes and dtypes involved, e.g.
/// "[add] at train.cpp:12: shapes (3,4) and (5) cannot be broadcast". An op that fails while it
/// runs names the line that recorded it: "[exp] recorded at train.cpp:9: out of memory ...".
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
  /// An error about the user's call at `location`, which `message` already names.
  Error(const std::string& message, std::source_location location)
      : std::runtime_error(message), location_(location) {}

  /// The line of the user's code the error is about: the call that was rejected, or the call that
  /// recorded the op that failed. Empty for errors about no call (a bad setting, a failed device).
  const std::optional<std::source_location>& location() const noexcept { return location_; }

 private:
  std::optional<std::source_location> location_;
};

}  // namespace lz
