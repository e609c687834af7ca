#include "runtime/environment.h"

#include <charconv>
#include <cstdlib>
#include <iostream>
#include <string_view>

namespace lz::runtime {

std::optional<int64_t> integer_from_environment(const char* name, int64_t minimum,
                                                int64_t maximum) {
  const char* text = std::getenv(name);
  if (text == nullptr) return std::nullopt;
  const std::string_view value(text);
  int64_t parsed = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), parsed);
  if (error == std::errc() && end == value.data() + value.size() && parsed >= minimum &&
      parsed <= maximum) {
    return parsed;
  }
  std::cerr << "[lazuli] ignoring " << name << "=" << value
            << "; expected a whole number >= " << minimum;
  if (maximum != std::numeric_limits<int64_t>::max()) std::cerr << " and <= " << maximum;
  std::cerr << "\n";
  return std::nullopt;
}

}  // namespace lz::runtime
