#include "frontend/settings.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/cpu/kernel_cache.h"
#include "codegen/disk_cache.h"
#include "lazuli/error.h"
#include "memory/buffer.h"
#include "passes/pass.h"
#include "support/dump_files.h"
#include "support/environment.h"

namespace lz::frontend {
namespace {

LogLevel parse_log_level(const char* text) {
  if (text == nullptr) return LogLevel::Off;
  const std::string_view value(text);
  if (value == "info" || value == "1") return LogLevel::Info;
  if (value == "debug") return LogLevel::Debug;
  if (!value.empty() && value != "off" && value != "0") {
    support::report_ignored_setting("LZ_LOG", value, "info, debug or off");
  }
  return LogLevel::Off;
}

/// Why `pattern` is no regular expression, or nothing when it is one.
std::optional<std::string> regex_error_of(const std::string& pattern) {
  try {
    const std::regex validated(pattern);
    return std::nullopt;
  } catch (const std::regex_error& error) {
    return std::string(error.what());
  }
}

/// The names in `comma_separated`, each without the spaces around it.
std::vector<std::string> split_names(std::string_view comma_separated) {
  std::vector<std::string> names;
  size_t start = 0;
  while (start <= comma_separated.size()) {
    const size_t comma = std::min(comma_separated.find(',', start), comma_separated.size());
    std::string_view name = comma_separated.substr(start, comma - start);
    while (!name.empty() && std::isspace(static_cast<unsigned char>(name.front()))) {
      name.remove_prefix(1);
    }
    while (!name.empty() && std::isspace(static_cast<unsigned char>(name.back()))) {
      name.remove_suffix(1);
    }
    if (!name.empty()) names.emplace_back(name);
    start = comma + 1;
  }
  return names;
}

/// The first of `names` that is no pass, or nothing.
std::optional<std::string> unknown_pass(const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    if (!passes::is_pass_name(name)) return name;
  }
  return std::nullopt;
}

/// Why `directory` cannot hold dumps, or nothing when it can (or is empty: dumping off).
std::optional<std::string> dump_directory_problem(const std::string& directory) {
  if (directory.empty()) return std::nullopt;
  return support::dump_folder_problem(directory);
}

/// LZ_JIT: a switch, or strict (compiled, and a kernel the JIT refuses fails instead of being
/// interpreted).
void read_jit_setting(Settings& settings) {
  const char* text = std::getenv("LZ_JIT");
  if (text == nullptr) return;
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "strict") {
    settings.jit = true;
    settings.jit_strict = true;
  } else if (const std::optional<bool> enabled = support::parse_switch(text)) {
    settings.jit = *enabled;
  } else {
    support::report_ignored_setting("LZ_JIT", text,
                                    std::string(support::kSwitchValues) + ", or strict");
  }
}

struct SettingsStore {
  std::mutex mutex;
  Settings settings;

  SettingsStore() {
    settings.log_level = parse_log_level(std::getenv("LZ_LOG"));
    if (const char* dump = std::getenv("LZ_DUMP")) {
      if (const std::optional<std::string> why = dump_directory_problem(dump)) {
        support::report_ignored_setting("LZ_DUMP", dump,
                                        "a directory lazuli can write (" + *why + ")");
      } else {
        settings.dump_directory = dump;
      }
    }
    settings.fusion = support::boolean_from_environment("LZ_FUSION").value_or(settings.fusion);
    read_jit_setting(settings);
    settings.plan_cache =
        support::boolean_from_environment("LZ_PLAN_CACHE").value_or(settings.plan_cache);
    settings.in_place =
        support::boolean_from_environment("LZ_IN_PLACE").value_or(settings.in_place);
    if (const auto kernels = support::integer_from_environment("LZ_KERNEL_CACHE_SIZE", 1)) {
      codegen::set_memory_cache_capacity(*kernels);
    }
    if (codegen::DiskCache::enabled_by_environment()) {
      settings.cache_directory = codegen::DiskCache::default_directory().string();
    }
    if (const char* off = std::getenv("LZ_PASSES_OFF")) {
      std::vector<std::string> names = split_names(off);
      if (const std::optional<std::string> unknown = unknown_pass(names)) {
        support::report_ignored_setting("LZ_PASSES_OFF", off,
                                        "pass names separated by commas ('" + *unknown +
                                            "' is none; the passes are " +
                                            passes::pass_names_text() + ")");
      } else {
        settings.disabled_passes = std::move(names);
      }
    }
    if (const char* dumped = std::getenv("LZ_DUMP_PASSES")) {
      if (const std::optional<std::string> why = regex_error_of(dumped)) {
        support::report_ignored_setting("LZ_DUMP_PASSES", dumped,
                                        "a regular expression (" + *why + ")");
      } else {
        settings.dump_passes = dumped;
      }
    }
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
    support::report_ignored_setting("LZ_ENGINE", value, "sync or async");
  }
  return Engine::Async;
}

constexpr int64_t kDefaultMaxPendingNodes = 10000;
constexpr int64_t kDefaultMaxInFlight = 32;

std::atomic<Engine> engine_setting{engine_from_environment()};
std::atomic<int64_t> max_pending_nodes_setting{
    support::integer_from_environment("LZ_MAX_PENDING_NODES", 0).value_or(kDefaultMaxPendingNodes)};
std::atomic<int64_t> max_in_flight_setting{
    support::integer_from_environment("LZ_MAX_IN_FLIGHT", 1).value_or(kDefaultMaxInFlight)};

/// Throws the lz::Error of setter `name` given `value` below `minimum` (what its environment
/// variable reports and ignores). `zero` says what 0 means, where it is valid.
void check_at_least(const char* name, int64_t value, int64_t minimum, const char* zero = "") {
  if (value >= minimum) return;
  throw Error("[" + std::string(name) + "] needs a whole number >= " + std::to_string(minimum) +
              zero + ", got " + std::to_string(value));
}

}  // namespace

Settings current_settings() {
  std::unique_lock lock(store().mutex);
  Settings settings = store().settings;
  lock.unlock();
  if (support::dumping_turned_off()) settings.dump_directory.clear();  // a dump failed
  return settings;
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
  if (const std::optional<std::string> why = frontend::dump_directory_problem(directory)) {
    throw Error("[set_dump_directory] cannot dump into '" + directory + "': " + *why +
                "; give a directory lazuli can write, or \"\" to turn dumping off");
  }
  std::lock_guard lock(frontend::store().mutex);
  frontend::store().settings.dump_directory = directory;
  support::allow_dumping();
}

void set_fusion(bool enabled) {
  std::lock_guard lock(frontend::store().mutex);
  frontend::store().settings.fusion = enabled;
}

void set_jit(bool enabled) {
  std::lock_guard lock(frontend::store().mutex);
  frontend::store().settings.jit = enabled;
}

void set_jit_strict(bool strict) {
  std::lock_guard lock(frontend::store().mutex);
  frontend::store().settings.jit_strict = strict;
}

void set_plan_cache(bool enabled) {
  std::lock_guard lock(frontend::store().mutex);
  frontend::store().settings.plan_cache = enabled;
}

void set_in_place(bool enabled) {
  std::lock_guard lock(frontend::store().mutex);
  frontend::store().settings.in_place = enabled;
}

void set_cache_directory(const std::string& directory) {
  std::lock_guard lock(frontend::store().mutex);
  frontend::store().settings.cache_directory = directory;
}

void set_kernel_cache_size(int64_t kernels) {
  frontend::check_at_least("set_kernel_cache_size", kernels, 1);
  std::lock_guard lock(frontend::store().mutex);  // after LZ_KERNEL_CACHE_SIZE, which it overrides
  codegen::set_memory_cache_capacity(kernels);
}

void set_dump_passes(const std::string& pattern) {
  // An invalid pattern fails here, not at an evaluation.
  if (const std::optional<std::string> why = frontend::regex_error_of(pattern)) {
    throw Error("[set_dump_passes] '" + pattern + "' is not a regular expression: " + *why +
                "; expected pass names such as \"fuse|schedule\", or \".*\" for every pass");
  }
  std::lock_guard lock(frontend::store().mutex);
  frontend::store().settings.dump_passes = pattern;
}

void set_disabled_passes(const std::string& comma_separated_names) {
  std::vector<std::string> names = frontend::split_names(comma_separated_names);
  if (const std::optional<std::string> unknown = frontend::unknown_pass(names)) {
    throw Error("[set_disabled_passes] '" + *unknown + "' in '" + comma_separated_names +
                "' is no pass; the passes are " + passes::pass_names_text());
  }
  std::lock_guard lock(frontend::store().mutex);
  frontend::store().settings.disabled_passes = std::move(names);
}

void set_engine(Engine engine) {
  frontend::engine_setting.store(engine, std::memory_order_relaxed);
}

void set_max_pending_nodes(int64_t nodes) {
  frontend::check_at_least("set_max_pending_nodes", nodes, 0, " (0: no bound)");
  frontend::max_pending_nodes_setting.store(nodes, std::memory_order_relaxed);
}

void set_max_in_flight(int64_t evaluations) {
  frontend::check_at_least("set_max_in_flight", evaluations, 1);
  frontend::max_in_flight_setting.store(evaluations, std::memory_order_relaxed);
}

void set_memory_limit(int64_t bytes) {
  frontend::check_at_least("set_memory_limit", bytes, 0, " (0: the default)");
  memory::Buffer::set_memory_limit(bytes);
}

}  // namespace lz
