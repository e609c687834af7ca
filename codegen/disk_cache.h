// An on-disk store of compiled object code, shared by every process of the user, so that a
// kernel compiled once is loaded instead of compiled in later runs.
//
// One file per entry, named by a hash of the key; the file holds the whole key, so a hash
// collision is a miss, never a wrong kernel. Files are written to a temporary name and renamed
// into place: another process sees the old file, the new one or none, never half of one. A file
// that fails any check (truncated by a crash, overwritten, from another format version) is a
// miss and is removed.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace lz::codegen {

class DiskCache {
 public:
  /// A cache in `directory` (created when first stored to) whose entries are kept below about
  /// `max_bytes` by removing the least recently used.
  DiskCache(std::filesystem::path directory, int64_t max_bytes);

  /// The object stored under exactly `key`, or nullopt. Never throws; a file at the entry's
  /// path that cannot be used (damaged, not a regular file, another key's) is removed, and
  /// `problem`, when given, says which file and why (it stays empty for a plain miss).
  std::optional<std::string> load(std::string_view key, std::string* problem = nullptr) const;

  /// Stores `object` under `key`, replacing what was there. False when the file could not be
  /// written (the caller decides whether to log it); never throws.
  bool store(std::string_view key, std::string_view object);

  const std::filesystem::path& directory() const { return directory_; }
  int64_t max_bytes() const { return max_bytes_; }

  /// The file that holds `key`'s entry: 16 hex digits of a 64-bit hash of the key, then ".lzo".
  static std::string file_name(std::string_view key);

  /// $LZ_CACHE_DIR, else $XDG_CACHE_HOME/lazuli, else $HOME/.cache/lazuli; empty if none is set.
  static std::filesystem::path default_directory();
  /// False when LZ_CACHE=0.
  static bool enabled_by_environment();
  /// LZ_CACHE_MAX_BYTES when it is a non-negative integer, else 512 MiB.
  static int64_t default_max_bytes();

 private:
  /// Removes the least recently used entries once the directory holds more than max_bytes_.
  void evict();

  std::filesystem::path directory_;
  int64_t max_bytes_;
};

}  // namespace lz::codegen
