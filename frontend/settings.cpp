#include "frontend/settings.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <regex>
#include <string_view>

#include "codegen/disk_cache.h"
#include "runtime/buffer.h"
#include "runtime/environment.h"

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

Engine engine_from_environment() {
  const char* text = std::getenv("LZ_ENGINE");
  if (text == nullptr) return Engine::Async;
  const std::string_view value(text);
  if (value == "sync") return Engine::Sync;
  if (value != "async" && !value.empty()) {
    std::cerr << "[lazuli] ignoring LZ_ENGINE=" << value << "; expected sync or async\n";
  }
  return Engine::Async;
}

constexpr int64_t kDefaultMaxPendingNodes = 10000;
constexpr int64_t kDefaultMaxInFlight = 32;

std::atomic<Engine> engine_setting{engine_from_environment()};
std::atomic<int64_t> max_pending_nodes_setting{
    runtime::integer_from_environment("LZ_MAX_PENDING_NODES", 0).value_or(kDefaultMaxPendingNodes)};
std::atomic<int64_t> max_in_flight_setting{std::max<int64_t>(
    1, runtime::integer_from_environment("LZ_MAX_IN_FLIGHT", 0).value_or(kDefaultMaxInFlight))};

}  // namespace

Settings current_settings() {
  std::lock_guard lock(store().mutex);
  return store().settings;
}

Engine engine() { return engine_setting.load(std::memory_order_relaxed); }

int64_t max_pending_nodes() { return max_pending_nodes_setting.load(std::memory_order_relaxed); }

int64_t max_in_flight() { return max_in_flight_setting.load(std::memory_order_relaxed); }

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

void set_engine(Engine engine) {
  frontend::engine_setting.store(engine, std::memory_order_relaxed);
}

void set_max_pending_nodes(int64_t nodes) {
  frontend::max_pending_nodes_setting.store(std::max<int64_t>(0, nodes), std::memory_order_relaxed);
}

void set_max_in_flight(int64_t evaluations) {
  frontend::max_in_flight_setting.store(std::max<int64_t>(1, evaluations),
                                        std::memory_order_relaxed);
}

void set_memory_limit(int64_t bytes) { runtime::Buffer::set_memory_limit(bytes); }

}  // namespace lz
