// The environment settings (LZ_LOG, LZ_DUMP, LZ_FUSION, LZ_ENGINE, ...), read once, each with an
// API override (include/lazuli/settings.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lazuli/settings.h"

namespace lz::frontend {

struct Settings {
  LogLevel log_level = LogLevel::Off;        // LZ_LOG=info|debug
  std::string dump_directory;                // LZ_DUMP=dir; empty: no dumps
  bool fusion = true;                        // LZ_FUSION=0: off
  bool jit = true;                           // LZ_JIT=0: interpret every kernel
  bool jit_strict = false;                   // LZ_JIT=strict: a kernel the JIT refuses fails
  bool plan_cache = true;                    // LZ_PLAN_CACHE=0: run the passes at every evaluation
  bool in_place = true;                      // LZ_IN_PLACE=0: every output in memory of its own
  std::string cache_directory;               // LZ_CACHE_DIR (or its default); empty: no disk cache
  std::vector<std::string> disabled_passes;  // LZ_PASSES_OFF=name,name
  std::string dump_passes = ".*";            // LZ_DUMP_PASSES=regex: passes dumped under LZ_DUMP
};

/// A copy of the current settings (safe to call from any thread).
Settings current_settings();

// The settings every recorded op consults, kept apart as atomics so reading them costs no lock
// and no copy.

/// LZ_ENGINE=sync|async (default async).
Engine engine();
/// LZ_MAX_PENDING_NODES (default 10,000; 0: no bound).
int64_t max_pending_nodes();
/// LZ_MAX_IN_FLIGHT (default 32, at least 1).
int64_t max_in_flight();

}  // namespace lz::frontend
