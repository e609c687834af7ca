#include "support/environment.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>
#include <string>
#include <string_view>

namespace lz::support {
namespace {

/// True the first time `name` is seen set to `value`: some settings are read at every use (a
/// kernel cache opens for each compile), and one report of a bad value is enough.
bool first_report(const char* name, std::string_view value) {
  static std::mutex mutex;
  static auto* reported = new std::set<std::string>();  // never destroyed: read at exit too
  std::lock_guard lock(mutex);
  return reported->insert(std::string(name) + "=" + std::string(value)).second;
}

}  // namespace

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
  std::string expected = "a whole number >= " + std::to_string(minimum);
  if (maximum != std::numeric_limits<int64_t>::max()) {
    expected += " and <= " + std::to_string(maximum);
  }
  report_ignored_setting(name, value, expected);
  return std::nullopt;
}

std::optional<bool> parse_switch(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const char* word : {"1", "on", "true", "yes"}) {
    if (lower == word) return true;
  }
  for (const char* word : {"0", "off", "false", "no"}) {
    if (lower == word) return false;
  }
  return std::nullopt;
}

std::optional<bool> boolean_from_environment(const char* name) {
  const char* text = std::getenv(name);
  if (text == nullptr) return std::nullopt;
  const std::optional<bool> value = parse_switch(text);
  if (!value) report_ignored_setting(name, text, kSwitchValues);
  return value;
}

void report_ignored_setting(const char* name, std::string_view value, std::string_view expected) {
  if (!first_report(name, value)) return;
  const std::string report = "[lazuli] ignoring " + std::string(name) + "=" + std::string(value) +
                             "; expected " + std::string(expected) + "\n";
  std::fputs(report.c_str(), stderr);  // one write: no interleaving with threads
}

}  // namespace lz::support
