// The environment settings (LZ_LOG, LZ_DUMP), read once, each with an API override.
#pragma once

#include <string>

#include "lazuli/inspect.h"

namespace lz::frontend {

struct Settings {
  LogLevel log_level = LogLevel::Off;  // LZ_LOG=info|debug
  std::string dump_directory;          // LZ_DUMP=dir; empty: no dumps
};

/// A copy of the current settings (safe to call from any thread).
Settings current_settings();

}  // namespace lz::frontend
