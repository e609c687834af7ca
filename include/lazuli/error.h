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
  /// What is wrong: a value (a shape, an axis, a setting, a failure while running: the default),
  /// or the dtype of an operand, which the op does not take. The Python package raises the second
  /// kind as lazuli.DTypeError, a TypeError.
  enum class Kind { Value, Type };

  explicit Error(const std::string& message, Kind kind = Kind::Value)
      : std::runtime_error(message), kind_(kind) {}
  /// An error about the user's call at `location`, which `message` already names.
  Error(const std::string& message, std::source_location location, Kind kind = Kind::Value)
      : std::runtime_error(message), location_(location), kind_(kind) {}

  Kind kind() const noexcept { return kind_; }

  /// The line of the user's code the error is about: the call that was rejected, or the call that
  /// recorded the op that failed. Empty for errors about no call (a bad setting, a failed device).
  const std::optional<std::source_location>& location() const noexcept { return location_; }

 private:
  std::optional<std::source_location> location_;
  Kind kind_;
};

}  // namespace lz
