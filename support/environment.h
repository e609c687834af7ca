// Numbers and switches lazuli reads from environment variables (LZ_NUM_THREADS, LZ_FUSION, ...).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>

namespace lz::support {

/// The integer in environment variable `name` when it is set to a whole number in
/// [minimum, maximum]; nothing when it is unset, or set to anything else (which is reported on
/// stderr, naming the variable and what would be valid, so a mistyped setting is never silently
/// dropped; once per variable and value, however often it is read).
std::optional<int64_t> integer_from_environment(
    const char* name, int64_t minimum, int64_t maximum = std::numeric_limits<int64_t>::max());

/// The switch in environment variable `name`: true for 1, on, true or yes, false for 0, off,
/// false or no (in any case); nothing when it is unset, or set to anything else (reported on
/// stderr as integer_from_environment reports a bad number).
std::optional<bool> boolean_from_environment(const char* name);

/// `text` as a switch: true for 1, on, true or yes, false for 0, off, false or no (in any case);
/// nothing for anything else. For a setting that takes a switch or a word of its own (LZ_JIT).
std::optional<bool> parse_switch(std::string_view text);

/// What a switch may be set to, as the report of a bad value says it.
inline constexpr std::string_view kSwitchValues = "1, on, true or yes, or 0, off, false or no";

/// Reports on stderr, once per variable and value however often it is read, that environment
/// variable `name` is ignored for holding `value`, and what would be valid.
void report_ignored_setting(const char* name, std::string_view value, std::string_view expected);

}  // namespace lz::support
