// Numbers lazuli reads from environment variables (LZ_NUM_THREADS, LZ_MEMORY_LIMIT, ...).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>

namespace lz::runtime {

/// The integer in environment variable `name` when it is set to a whole number in
/// [minimum, maximum]; nothing when it is unset, or set to anything else (which is reported on
/// stderr, naming the variable and what would be valid, so a mistyped setting is never silently
/// dropped; once per variable and value, however often it is read).
std::optional<int64_t> integer_from_environment(
    const char* name, int64_t minimum, int64_t maximum = std::numeric_limits<int64_t>::max());

}  // namespace lz::runtime
