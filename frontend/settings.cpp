#include "frontend/settings.h"

#include <cstdlib>
#include <iostream>
#include <mutex>
#include <regex>
#include <string_view>

#include "codegen/cpu/disk_cache.h"

namespace lz::frontend {
namespace {

LogLevel parse_log_level(const char* text) {
  if (text == nullptr) return LogLevel::Off;
  const std::string_view value(text);
  if (value == "info" || value == "1") return LogLevel::Info;
  if (value == "debug") return LogLevel::Debug;
  if (!value.empty() && value != "off" && value != "0") {
    std::cerr << "[lazuli] ignoring LZ_LOG=" << value << "; expected info, debug or off\n";
  }
  return LogLevel::Off;
}

struct SettingsStore {
  std::mutex mutex;
  Settings settings;

  SettingsStore() {
    settings.log_level = parse_log_level(std::getenv("LZ_LOG"));
    if (const char* dump = std::getenv("LZ_DUMP")) settings.dump_directory = dump;
    if (const char* fusion = std::getenv("LZ_FUSION"))
      settings.fusion = std::string_view(fusion) != "0";
    if (const char* jit = std::getenv("LZ_JIT")) settings.jit = std::string_view(jit) != "0";
    if (codegen::DiskCache::enabled_by_environment()) {
      settings.cache_directory = codegen::DiskCache::default_directory().string();
    }
    if (const char* off = std::getenv("LZ_PASSES_OFF")) settings.disabled_passes = off;
    if (const char* dumped = std::getenv("LZ_DUMP_PASSES")) settings.dump_passes = dumped;
  }
};

SettingsStore& store() {
  static SettingsStore instance;
  return instance;
}

}  // namespace

Settings current_settings() {
  std::lock_guard lock(store().mutex);
  return store().settings;
}

}  // namespace lz::frontend

namespace lz {

void set_log_level(LogLevel level) {
  std::lock_guard lock(frontend::store().mutex);
  frontend::store().settings.log_level = level;
}

void set_dump_directory(const std::string& directory) {
  std::lock_guard lock(frontend::store().mutex);
  frontend::store().settings.dump_directory = directory;
}

void set_fusion(bool enabled) {
  std::lock_guard lock(frontend::store().mutex);
  frontend::store().settings.fusion = enabled;
}

void set_jit(bool enabled) {
  std::lock_guard lock(frontend::store().mutex);
  frontend::store().settings.jit = enabled;
}

void set_cache_directory(const std::string& directory) {
  std::lock_guard lock(frontend::store().mutex);
  frontend::store().settings.cache_directory = directory;
}

void set_dump_passes(const std::string& pattern) {
  const std::regex validated(pattern);  // an invalid pattern throws here, not at an evaluation
  (void)validated;
  std::lock_guard lock(frontend::store().mutex);
  frontend::store().settings.dump_passes = pattern;
}

void set_disabled_passes(const std::string& comma_separated_names) {
  std::lock_guard lock(frontend::store().mutex);
  frontend::store().settings.disabled_passes = comma_separated_names;
}

}  // namespace lz
