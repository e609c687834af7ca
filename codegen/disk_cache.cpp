#include "codegen/disk_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "support/environment.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <thread>
#include <utility>
#include <vector>

namespace lz::codegen {
namespace {

namespace fs = std::filesystem;

// File layout, integers little-endian:
//   magic (8 bytes) | format version (u32) | key length (u64) | key | object length (u64) |
//   object | checksum (u64, FNV-1a over every byte before it)
constexpr std::string_view kMagic("LZOBJECT", 8);
constexpr uint32_t kFormatVersion = 1;
constexpr std::string_view kExtension = ".lzo";
constexpr std::string_view kTemporaryExtension = ".tmp";
constexpr size_t kHeaderBytes = kMagic.size() + sizeof(uint32_t) + sizeof(uint64_t);
// A larger file is not one this cache wrote (objects are kernels: kilobytes, not gigabytes).
constexpr int64_t kMaxFileBytes = int64_t{1} << 30;
// A temporary file this old was left by a process that died while writing it.
constexpr auto kAbandonedTemporaryAge = std::chrono::hours(1);
constexpr int64_t kDefaultMaxBytes = int64_t{512} << 20;

uint64_t fnv1a(std::string_view bytes, uint64_t hash = 0xcbf29ce484222325ull) {
  for (const char byte : bytes) {
    hash ^= static_cast<unsigned char>(byte);
    hash *= 0x100000001b3ull;
  }
  return hash;
}

void append_integer(std::string& out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

/// Reads integers and byte strings from a file's contents; any read past the end fails.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}

  bool integer(uint64_t& value, int bytes) {
    if (remaining() < static_cast<size_t>(bytes)) return false;
    value = 0;
    for (int i = 0; i < bytes; ++i) {
      value |= uint64_t{static_cast<unsigned char>(bytes_[offset_ + i])} << (8 * i);
    }
    offset_ += bytes;
    return true;
  }

  bool bytes(std::string_view& value, uint64_t length) {
    if (remaining() < length) return false;
    value = bytes_.substr(offset_, length);
    offset_ += length;
    return true;
  }

  size_t offset() const { return offset_; }
  size_t remaining() const { return bytes_.size() - offset_; }

 private:
  std::string_view bytes_;
  size_t offset_ = 0;
};

std::string encode(std::string_view key, std::string_view object) {
  std::string file;
  file.reserve(kHeaderBytes + key.size() + sizeof(uint64_t) + object.size() + sizeof(uint64_t));
  file.append(kMagic);
  append_integer(file, kFormatVersion, sizeof(uint32_t));
  append_integer(file, key.size(), sizeof(uint64_t));
  file.append(key);
  append_integer(file, object.size(), sizeof(uint64_t));
  file.append(object);
  append_integer(file, fnv1a(file), sizeof(uint64_t));
  return file;
}

/// The object in `file` if it is a complete, intact entry for exactly `key`; otherwise says why
/// in `problem`.
std::optional<std::string> decode(std::string_view file, std::string_view key,
                                  std::string& problem) {
  Reader reader(file);
  std::string_view magic;
  uint64_t version = 0;
  uint64_t key_length = 0;
  std::string_view stored_key;
  uint64_t object_length = 0;
  std::string_view object;
  if (!reader.bytes(magic, kMagic.size()) || magic != kMagic) {
    problem = "it is not a lazuli cache entry";
    return std::nullopt;
  }
  if (!reader.integer(version, sizeof(uint32_t)) || version != kFormatVersion) {
    problem = "it has another format version";
    return std::nullopt;
  }
  if (!reader.integer(key_length, sizeof(uint64_t)) || !reader.bytes(stored_key, key_length) ||
      !reader.integer(object_length, sizeof(uint64_t)) || !reader.bytes(object, object_length)) {
    problem = "it is cut short";
    return std::nullopt;
  }
  const size_t checked_bytes = reader.offset();
  uint64_t checksum = 0;
  if (!reader.integer(checksum, sizeof(uint64_t)) || reader.remaining() != 0 ||
      checksum != fnv1a(file.substr(0, checked_bytes))) {
    problem = "it is damaged (its checksum does not match)";
    return std::nullopt;
  }
  if (stored_key != key) {
    problem = "it holds another kernel whose key has the same hash";
    return std::nullopt;
  }
  return std::string(object);
}

/// The whole file at `descriptor`, or nullopt (saying why in `problem`) when it is not a regular
/// file, cannot be read or is implausibly large.
std::optional<std::string> read_all(int descriptor, std::string& problem) {
  struct stat status {};
  if (fstat(descriptor, &status) != 0) {
    problem = std::string("it cannot be examined (") + std::strerror(errno) + ")";
    return std::nullopt;
  }
  if (!S_ISREG(status.st_mode)) {
    problem = "it is not a regular file";
    return std::nullopt;
  }
  if (status.st_size < 0 || status.st_size > kMaxFileBytes) {
    problem = "it is larger than any entry this cache writes";
    return std::nullopt;
  }
  std::string contents(static_cast<size_t>(status.st_size), '\0');
  size_t done = 0;
  while (done < contents.size()) {
    const ssize_t got = ::read(descriptor, contents.data() + done, contents.size() - done);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      problem = got < 0 ? std::string("it cannot be read (") + std::strerror(errno) + ")"
                        : "it was cut short while being read";
      return std::nullopt;
    }
    done += static_cast<size_t>(got);
  }
  return contents;
}

bool write_all(int descriptor, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t written = ::write(descriptor, bytes.data(), bytes.size());
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(written));
  }
  return true;
}

/// A name no other writer uses at the same time: process, thread and a per-process counter.
std::string temporary_name(std::string_view final_name) {
  static std::atomic<uint64_t> counter{0};
  const size_t thread = std::hash<std::thread::id>()(std::this_thread::get_id());
  return std::string(final_name) + "." + std::to_string(::getpid()) + "." + std::to_string(thread) +
         "." + std::to_string(counter.fetch_add(1)) + std::string(kTemporaryExtension);
}

bool ends_with(const std::string& text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(),
                                                      suffix.data(), suffix.size()) == 0;
}

const char* nonempty_environment(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : nullptr;
}

}  // namespace

DiskCache::DiskCache(fs::path directory, int64_t max_bytes)
    : directory_(std::move(directory)), max_bytes_(max_bytes) {}

std::string DiskCache::file_name(std::string_view key) {
  constexpr char kDigits[] = "0123456789abcdef";
  const uint64_t hash = fnv1a(key);
  std::string name(16, '0');
  for (int i = 0; i < 16; ++i) name[15 - i] = kDigits[(hash >> (4 * i)) & 0xf];
  return name + std::string(kExtension);
}

std::optional<std::string> DiskCache::load(std::string_view key, std::string* problem) const {
  const fs::path path = directory_ / file_name(key);
  // Non-blocking, so that a FIFO or a device at the entry's path cannot stall the open; a
  // regular file reads as usual.
  const int descriptor = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (descriptor < 0) {
    if (errno != ENOENT && problem != nullptr) {
      *problem = path.string() + " cannot be opened (" + std::strerror(errno) + ")";
    }
    return std::nullopt;
  }
  std::string why;
  std::optional<std::string> object;
  if (const std::optional<std::string> contents = read_all(descriptor, why)) {
    object = decode(*contents, key, why);
  }
  // Loading counts as use for eviction; failing to update the time (read-only cache) is fine.
  if (object) (void)::futimens(descriptor, nullptr);
  ::close(descriptor);
  if (!object) {
    if (problem != nullptr) *problem = path.string() + " was not used: " + why;
    // Removing may race with a writer renaming a good entry into place; that costs one
    // recompilation, never a wrong object.
    std::error_code ignored;
    fs::remove(path, ignored);
  }
  return object;
}

bool DiskCache::store(std::string_view key, std::string_view object) {
  std::error_code error;
  fs::create_directories(directory_, error);
  if (error) return false;
  const std::string name = file_name(key);
  const fs::path temporary = directory_ / temporary_name(name);
  const int descriptor = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (descriptor < 0) return false;
  // No fsync: a file cut short by a crash fails its checksum and is a miss.
  const bool written = write_all(descriptor, encode(key, object));
  const bool closed = ::close(descriptor) == 0;
  if (!written || !closed || ::rename(temporary.c_str(), (directory_ / name).c_str()) != 0) {
    ::unlink(temporary.c_str());
    return false;
  }
  evict();
  return true;
}

void DiskCache::evict() {
  struct Entry {
    fs::path path;
    int64_t bytes;
    fs::file_time_type last_write;
  };
  std::vector<Entry> entries;
  int64_t total_bytes = 0;
  const fs::file_time_type now = fs::file_time_type::clock::now();
  std::error_code error;
  for (fs::directory_iterator it(directory_, error), end; !error && it != end;
       it.increment(error)) {
    const std::string name = it->path().filename().string();
    std::error_code entry_error;
    const fs::file_time_type last_write = it->last_write_time(entry_error);
    if (entry_error) continue;  // removed by another process meanwhile
    if (ends_with(name, kTemporaryExtension) && now - last_write > kAbandonedTemporaryAge) {
      fs::remove(it->path(), entry_error);
      continue;
    }
    if (!ends_with(name, kExtension)) continue;
    const auto bytes = static_cast<int64_t>(it->file_size(entry_error));
    if (entry_error) continue;
    entries.push_back({it->path(), bytes, last_write});
    total_bytes += bytes;
  }
  if (total_bytes <= max_bytes_) return;
  // Down to three quarters of the bound, so that the next few stores do not evict again.
  std::sort(entries.begin(), entries.end(),
            [](const Entry& a, const Entry& b) { return a.last_write < b.last_write; });
  const int64_t target = max_bytes_ / 4 * 3;
  for (const Entry& entry : entries) {
    if (total_bytes <= target) break;
    std::error_code ignored;
    fs::remove(entry.path, ignored);
    total_bytes -= entry.bytes;
  }
}

fs::path DiskCache::default_directory() {
  if (const char* directory = nonempty_environment("LZ_CACHE_DIR")) return directory;
  if (const char* cache_home = nonempty_environment("XDG_CACHE_HOME")) {
    return fs::path(cache_home) / "lazuli";
  }
  if (const char* home = nonempty_environment("HOME")) return fs::path(home) / ".cache" / "lazuli";
  return {};
}

bool DiskCache::enabled_by_environment() {
  return support::boolean_from_environment("LZ_CACHE").value_or(true);
}

int64_t DiskCache::default_max_bytes() {
  return support::integer_from_environment("LZ_CACHE_MAX_BYTES", 0).value_or(kDefaultMaxBytes);
}

}  // namespace lz::codegen
