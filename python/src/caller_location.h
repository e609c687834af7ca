// Where a Python caller called lazuli, as the std::source_location every lazuli op takes: errors
// and IR dumps then name the user's Python line, not the binding's C++ one.
#pragma once

#include <source_location>
#include <string>

namespace lz::python {

/// The innermost Python frame outside the lazuli package (its own wrappers are skipped): its
/// file, function and line. Empty (line 0) when no Python code is running. Needs the GIL.
std::source_location caller_location();

/// The folder of the lazuli package, whose frames caller_location() skips.
void set_package_directory(const std::string& directory);

}  // namespace lz::python
