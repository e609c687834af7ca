#include "codegen/disk_cache.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace lz::codegen {
namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_file(const fs::path& path, std::string_view contents) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
}

/// A key like the JIT's: long, with every byte value, NULs included.
std::string long_binary_key(int variant) {
  std::string key = "kernel " + std::to_string(variant) + " target x86-64 avx2 lazuli 0.1.0 ";
  for (int i = 0; i < 1000; ++i) key.push_back(static_cast<char>((i * 7 + variant) & 0xff));
  return key;
}

/// An object whose bytes depend on the key, of a length that varies with it.
std::string object_for(std::string_view key, size_t length) {
  std::string object(length, '\0');
  uint64_t state = std::hash<std::string_view>()(key);
  for (char& byte : object) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    byte = static_cast<char>(state >> 56);
  }
  return object;
}

class DiskCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "lazuli-disk-cache-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
  }
  void TearDown() override { fs::remove_all(root_); }

  /// Every ".lzo" file of `directory`.
  static std::vector<fs::path> entries(const fs::path& directory) {
    std::vector<fs::path> found;
    for (const fs::directory_entry& entry : fs::directory_iterator(directory)) {
      if (entry.path().extension() == ".lzo") found.push_back(entry.path());
    }
    return found;
  }

  fs::path root_;
};

TEST_F(DiskCacheTest, StoredObjectLoadsBackExactly) {
  DiskCache cache(root_ / "nested" / "cache", 1 << 20);
  const std::string key = long_binary_key(1);
  const std::string object = object_for(key, 4099);
  ASSERT_TRUE(cache.store(key, object));
  EXPECT_TRUE(fs::exists(root_ / "nested" / "cache" / DiskCache::file_name(key)));
  EXPECT_EQ(cache.load(key), object);
  // A second cache on the same directory (another process, later) finds it too.
  EXPECT_EQ(DiskCache(root_ / "nested" / "cache", 1 << 20).load(key), object);
}

TEST_F(DiskCacheTest, EmptyObjectAndEmptyKeyRoundTrip) {
  DiskCache cache(root_, 1 << 20);
  ASSERT_TRUE(cache.store("", "object of the empty key"));
  ASSERT_TRUE(cache.store("key of the empty object", ""));
  EXPECT_EQ(cache.load(""), "object of the empty key");
  EXPECT_EQ(cache.load("key of the empty object"), "");
}

TEST_F(DiskCacheTest, UnknownKeyAndMissingDirectoryAreMisses) {
  EXPECT_EQ(DiskCache(root_ / "does-not-exist", 1 << 20).load("key"), std::nullopt);
  DiskCache cache(root_, 1 << 20);
  ASSERT_TRUE(cache.store("stored", "object"));
  EXPECT_EQ(cache.load("not stored"), std::nullopt);
  EXPECT_EQ(cache.load("stored"), "object");
}

TEST_F(DiskCacheTest, StoreReplacesThePreviousObject) {
  DiskCache cache(root_, 1 << 20);
  ASSERT_TRUE(cache.store("key", "first object"));
  ASSERT_TRUE(cache.store("key", "second"));
  EXPECT_EQ(cache.load("key"), "second");
  EXPECT_EQ(entries(root_).size(), 1u);
}

TEST_F(DiskCacheTest, FileNameIsTheFnv1aHashInHex) {
  // Published FNV-1a 64 test vectors.
  EXPECT_EQ(DiskCache::file_name(""), "cbf29ce484222325.lzo");
  EXPECT_EQ(DiskCache::file_name("a"), "af63dc4c8601ec8c.lzo");
  EXPECT_EQ(DiskCache::file_name("foobar"), "85944171f73967e8.lzo");
}

TEST_F(DiskCacheTest, EntryOfAnotherKeyUnderTheSameFileNameIsAMissAndRemoved) {
  DiskCache cache(root_, 1 << 20);
  const std::string key_a = long_binary_key(1);
  const std::string key_b = long_binary_key(2);
  ASSERT_TRUE(cache.store(key_a, "object of a"));
  // As if key_b's hash collided with key_a's: key_b's file holds key_a's entry.
  fs::rename(root_ / DiskCache::file_name(key_a), root_ / DiskCache::file_name(key_b));
  EXPECT_EQ(cache.load(key_b), std::nullopt);
  EXPECT_FALSE(fs::exists(root_ / DiskCache::file_name(key_b)));
  ASSERT_TRUE(cache.store(key_b, "object of b"));
  EXPECT_EQ(cache.load(key_b), "object of b");
}

TEST_F(DiskCacheTest, FileTruncatedAtAnyLengthIsAMissAndIsRemoved) {
  DiskCache cache(root_, 1 << 20);
  const std::string key = long_binary_key(3);
  const std::string object = object_for(key, 300);
  ASSERT_TRUE(cache.store(key, object));
  const fs::path path = root_ / DiskCache::file_name(key);
  const std::string complete = read_file(path);
  ASSERT_GT(complete.size(), key.size() + object.size());
  for (size_t length = 0; length < complete.size(); ++length) {
    write_file(path, std::string_view(complete).substr(0, length));
    ASSERT_EQ(cache.load(key), std::nullopt) << "truncated to " << length << " bytes";
    ASSERT_FALSE(fs::exists(path)) << "truncated to " << length << " bytes";
  }
  ASSERT_TRUE(cache.store(key, object));
  EXPECT_EQ(cache.load(key), object);
}

TEST_F(DiskCacheTest, AnyChangedByteOrTrailingByteIsAMiss) {
  DiskCache cache(root_, 1 << 20);
  const std::string key = "key";
  ASSERT_TRUE(cache.store(key, object_for(key, 64)));
  const fs::path path = root_ / DiskCache::file_name(key);
  const std::string complete = read_file(path);
  for (size_t position = 0; position < complete.size(); ++position) {
    std::string damaged = complete;
    damaged[position] = static_cast<char>(damaged[position] ^ 0x10);
    write_file(path, damaged);
    ASSERT_EQ(cache.load(key), std::nullopt) << "byte " << position << " changed";
  }
  write_file(path, complete + '\0');
  EXPECT_EQ(cache.load(key), std::nullopt);
  write_file(path, complete);
  EXPECT_EQ(cache.load(key), object_for(key, 64));
}

TEST_F(DiskCacheTest, RandomGarbageIsAMissAndIsRemoved) {
  DiskCache cache(root_, 1 << 20);
  const fs::path path = root_ / DiskCache::file_name("key");
  std::mt19937_64 random(42);
  for (int trial = 0; trial < 200; ++trial) {
    std::string garbage(random() % 2000, '\0');
    for (char& byte : garbage) byte = static_cast<char>(random());
    // Half of them start like a real entry, so that the length fields are what is random.
    if (trial % 2 == 1) garbage.insert(0, std::string("LZOBJECT\1\0\0\0", 12));
    write_file(path, garbage);
    ASSERT_EQ(cache.load("key"), std::nullopt) << "trial " << trial;
    ASSERT_FALSE(fs::exists(path));
  }
  ASSERT_TRUE(cache.store("key", "object"));
  EXPECT_EQ(cache.load("key"), "object");
}

TEST_F(DiskCacheTest, AFifoAtAnEntrysPathIsAMissNotAHang) {
  DiskCache cache(root_, 1 << 20);
  const fs::path path = root_ / DiskCache::file_name("key");
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  std::string problem;
  EXPECT_EQ(cache.load("key", &problem), std::nullopt);  // before: open() waited for a writer
  EXPECT_NE(problem.find("not a regular file"), std::string::npos) << problem;
  EXPECT_NE(problem.find(path.string()), std::string::npos) << problem;
  EXPECT_FALSE(fs::exists(path));
  ASSERT_TRUE(cache.store("key", "object"));
  EXPECT_EQ(cache.load("key"), "object");
}

TEST_F(DiskCacheTest, AnEntryNotUsedSaysWhy) {
  DiskCache cache(root_, 1 << 20);
  const fs::path path = root_ / DiskCache::file_name("key");
  const auto problem_with = [&](std::string_view contents) {
    write_file(path, contents);
    std::string problem;
    EXPECT_EQ(cache.load("key", &problem), std::nullopt);
    return problem;
  };
  ASSERT_TRUE(cache.store("key", "object"));
  const std::string good = read_file(path);
  EXPECT_NE(problem_with("garbage").find("not a lazuli cache entry"), std::string::npos);
  EXPECT_NE(problem_with(good.substr(0, good.size() - 12)).find("cut short"), std::string::npos);
  std::string flipped = good;
  flipped[good.size() - 10] ^= 1;  // a byte of the object
  EXPECT_NE(problem_with(flipped).find("checksum"), std::string::npos);
  ASSERT_TRUE(cache.store("other key", "object"));
  fs::rename(root_ / DiskCache::file_name("other key"), path);
  std::string problem;
  EXPECT_EQ(cache.load("key", &problem), std::nullopt);
  EXPECT_NE(problem.find("another kernel"), std::string::npos) << problem;
  problem.clear();
  EXPECT_EQ(cache.load("absent", &problem), std::nullopt);
  EXPECT_EQ(problem, "") << "a plain miss has no problem";
}

TEST_F(DiskCacheTest, StoreFailsWhenTheDirectoryCannotBeCreated) {
  write_file(root_ / "a-file", "not a directory");
  DiskCache cache(root_ / "a-file" / "cache", 1 << 20);
  EXPECT_FALSE(cache.store("key", "object"));
  EXPECT_EQ(cache.load("key"), std::nullopt);
}

TEST_F(DiskCacheTest, EvictionKeepsTheBoundAndRemovesTheLeastRecentlyUsed) {
  constexpr int64_t kMaxBytes = 100000;
  DiskCache cache(root_, kMaxBytes);
  const auto start = fs::file_time_type::clock::now() - std::chrono::hours(10);
  auto key_of = [](int i) { return "kernel " + std::to_string(i); };
  for (int i = 0; i < 60; ++i) {
    ASSERT_TRUE(cache.store(key_of(i), object_for(key_of(i), 9000)));
    // Distinct, increasing times regardless of the file system's timestamp resolution.
    fs::last_write_time(root_ / DiskCache::file_name(key_of(i)), start + std::chrono::minutes(i));
    if (i == 5) {
      ASSERT_TRUE(cache.load(key_of(0)).has_value());  // now the most recently used
    }
    int64_t total = 0;
    for (const fs::path& entry : entries(root_))
      total += static_cast<int64_t>(fs::file_size(entry));
    ASSERT_LE(total, kMaxBytes) << "after storing " << i;
    ASSERT_TRUE(fs::exists(root_ / DiskCache::file_name(key_of(i)))) << "the newest is kept";
  }
  // Each entry is about 9 KB: eviction at the 12th leaves 8 (3/4 of the bound), the newest.
  // Kernel 0, loaded (so touched: its time is now) at the sixth store, outlived all others.
  std::vector<std::string> kept;
  for (int i = 0; i < 60; ++i) {
    if (fs::exists(root_ / DiskCache::file_name(key_of(i)))) kept.push_back(key_of(i));
  }
  std::vector<std::string> expected = {key_of(0)};
  for (int i = 60 - static_cast<int>(kept.size()) + 1; i < 60; ++i) expected.push_back(key_of(i));
  EXPECT_EQ(kept, expected);
  EXPECT_GE(kept.size(), 8u);
  EXPECT_LE(kept.size(), 11u);
  EXPECT_EQ(cache.load(key_of(0)), object_for(key_of(0), 9000));
}

TEST_F(DiskCacheTest, LoadedEntrySurvivesEvictionOfOlderOnes) {
  DiskCache cache(root_, 30000);
  const auto long_ago = fs::file_time_type::clock::now() - std::chrono::hours(1);
  for (int i = 0; i < 3; ++i) {
    const std::string key = "old " + std::to_string(i);
    ASSERT_TRUE(cache.store(key, object_for(key, 9000)));
    fs::last_write_time(root_ / DiskCache::file_name(key), long_ago + std::chrono::minutes(i));
  }
  ASSERT_TRUE(cache.load("old 0").has_value());  // touched: now the most recent of the three
  ASSERT_TRUE(cache.store("new", object_for("new", 9000)));  // 36 KB > 30 KB: evict to 22.5 KB
  EXPECT_TRUE(cache.load("old 0").has_value());
  EXPECT_FALSE(cache.load("old 1").has_value());
  EXPECT_FALSE(cache.load("old 2").has_value());
  EXPECT_TRUE(cache.load("new").has_value());
}

TEST_F(DiskCacheTest, AbandonedTemporaryFilesAreRemovedAndFreshOnesKept) {
  DiskCache cache(root_, 1 << 20);
  write_file(root_ / "0123456789abcdef.lzo.1.2.3.tmp", "left by a crashed writer");
  fs::last_write_time(root_ / "0123456789abcdef.lzo.1.2.3.tmp",
                      fs::file_time_type::clock::now() - std::chrono::hours(2));
  write_file(root_ / "0123456789abcdef.lzo.4.5.6.tmp", "being written right now");
  ASSERT_TRUE(cache.store("key", "object"));
  EXPECT_FALSE(fs::exists(root_ / "0123456789abcdef.lzo.1.2.3.tmp"));
  EXPECT_TRUE(fs::exists(root_ / "0123456789abcdef.lzo.4.5.6.tmp"));
}

/// Stores and loads random keys of a shared set for `duration`; the number of loads that
/// returned something other than nullopt or the key's object.
int wrong_loads_while_racing(const fs::path& directory, unsigned seed,
                             std::chrono::milliseconds duration, int& hits) {
  // A small bound, so that eviction removes files while other processes read them.
  DiskCache cache(directory, 400000);
  std::mt19937 random(seed);
  int wrong = 0;
  const auto end = std::chrono::steady_clock::now() + duration;
  while (std::chrono::steady_clock::now() < end) {
    const int index = static_cast<int>(random() % 24);
    const std::string key = long_binary_key(index);
    const std::string object = object_for(key, 1000 + 4000 * static_cast<size_t>(index));
    if (random() % 3 == 0) {
      if (!cache.store(key, object)) ++wrong;
    } else if (const std::optional<std::string> loaded = cache.load(key)) {
      ++hits;
      if (*loaded != object) ++wrong;
    }
  }
  return wrong;
}

TEST_F(DiskCacheTest, ConcurrentProcessesNeverLoadAnotherObject) {
  constexpr int kChildren = 2;
  constexpr auto kDuration = std::chrono::milliseconds(1500);
  std::vector<pid_t> children;
  for (int child = 0; child < kChildren; ++child) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int hits = 0;
      const int wrong = wrong_loads_while_racing(root_, 100 + child, kDuration, hits);
      ::_exit(wrong == 0 && hits > 0 ? 0 : 1);
    }
    children.push_back(pid);
  }
  int hits = 0;
  EXPECT_EQ(wrong_loads_while_racing(root_, 7, kDuration, hits), 0);
  EXPECT_GT(hits, 0);
  for (const pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "a child process loaded a wrong object, failed a store or never hit";
  }
}

/// Sets or unsets environment variables for one test, restoring them afterwards.
class ScopedEnvironment {
 public:
  void set(const char* name, const char* value) {
    if (!originals_.count(name)) {
      const char* original = std::getenv(name);
      originals_[name] = original ? std::optional<std::string>(original) : std::nullopt;
    }
    if (value == nullptr) {
      ::unsetenv(name);
    } else {
      ::setenv(name, value, 1);
    }
  }
  ~ScopedEnvironment() {
    for (const auto& [name, value] : originals_) {
      if (value) {
        ::setenv(name.c_str(), value->c_str(), 1);
      } else {
        ::unsetenv(name.c_str());
      }
    }
  }

 private:
  std::map<std::string, std::optional<std::string>> originals_;
};

TEST(DiskCacheEnvironmentTest, DefaultDirectoryFollowsTheEnvironment) {
  ScopedEnvironment environment;
  environment.set("LZ_CACHE_DIR", "/explicit/dir");
  environment.set("XDG_CACHE_HOME", "/xdg");
  environment.set("HOME", "/home/user");
  EXPECT_EQ(DiskCache::default_directory(), fs::path("/explicit/dir"));
  environment.set("LZ_CACHE_DIR", nullptr);
  EXPECT_EQ(DiskCache::default_directory(), fs::path("/xdg/lazuli"));
  environment.set("XDG_CACHE_HOME", "");
  EXPECT_EQ(DiskCache::default_directory(), fs::path("/home/user/.cache/lazuli"));
  environment.set("HOME", nullptr);
  EXPECT_EQ(DiskCache::default_directory(), fs::path());
}

TEST(DiskCacheEnvironmentTest, CacheIsOffOnlyForZero) {
  ScopedEnvironment environment;
  environment.set("LZ_CACHE", nullptr);
  EXPECT_TRUE(DiskCache::enabled_by_environment());
  environment.set("LZ_CACHE", "0");
  EXPECT_FALSE(DiskCache::enabled_by_environment());
  environment.set("LZ_CACHE", "1");
  EXPECT_TRUE(DiskCache::enabled_by_environment());
}

TEST(DiskCacheEnvironmentTest, MaxBytesComesFromTheEnvironmentWhenValid) {
  ScopedEnvironment environment;
  environment.set("LZ_CACHE_MAX_BYTES", nullptr);
  EXPECT_EQ(DiskCache::default_max_bytes(), 512 * 1024 * 1024);
  environment.set("LZ_CACHE_MAX_BYTES", "1048576");
  EXPECT_EQ(DiskCache::default_max_bytes(), 1048576);
  environment.set("LZ_CACHE_MAX_BYTES", "0");
  EXPECT_EQ(DiskCache::default_max_bytes(), 0);
  for (const char* invalid : {"-1", "lots", "12MB", ""}) {
    environment.set("LZ_CACHE_MAX_BYTES", invalid);
    EXPECT_EQ(DiskCache::default_max_bytes(), 512 * 1024 * 1024) << invalid;
  }
}

}  // namespace
}  // namespace lz::codegen
