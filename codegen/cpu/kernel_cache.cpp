#include "codegen/cpu/kernel_cache.h"

#include <cstdio>
#include <mutex>
#include <unordered_map>

#include "codegen/disk_cache.h"
#include "codegen/kernel_signature.h"
#include "runtime/statistics.h"

namespace lz::codegen {
namespace {

uint64_t fnv1a(std::string_view text) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

/// The disk cache as the JIT's ObjectStore; a failed write costs only the next process a
/// compile, so it is reported once, not raised.
class DiskObjectStore : public ObjectStore {
 public:
  explicit DiskObjectStore(const std::string& directory)
      : cache_(directory, DiskCache::default_max_bytes()) {}

  std::optional<std::string> load(const std::string& key, std::string& problem) override {
    return cache_.load(key, &problem);
  }

  void store(const std::string& key, const std::string& object) override {
    if (!cache_.store(key, object) && !warned_.exchange(true)) {
      std::fprintf(stderr, "[lazuli] could not write to the kernel cache directory %s\n",
                   cache_.directory().c_str());
    }
  }

 private:
  DiskCache cache_;
  static inline std::atomic<bool> warned_{false};
};

struct MemoryCache {
  std::mutex mutex;
  std::unordered_map<std::string, std::shared_ptr<const CompiledKernel>> kernels;
};

MemoryCache& memory_cache() {
  static MemoryCache* cache = new MemoryCache();  // kernels may run until the process exits
  return *cache;
}

}  // namespace

const char* kernel_source_name(KernelSource source) {
  switch (source) {
    case KernelSource::Memory: return "memory";
    case KernelSource::Disk: return "disk";
    case KernelSource::Compiled: return "compiled";
  }
  return "";
}

KernelLookup find_or_compile(const passes::Kernel& kernel, const std::string& disk_directory,
                             KernelDump* dump) {
  runtime::Counters& counters = runtime::counters();
  const bool flat = is_flat(kernel);
  std::string key = kernel_key(kernel, flat);
  MemoryCache& cache = memory_cache();
  if (dump == nullptr) {
    std::lock_guard lock(cache.mutex);
    if (auto found = cache.kernels.find(key); found != cache.kernels.end()) {
      counters.cache_hits.fetch_add(1, std::memory_order_relaxed);
      return {found->second, KernelSource::Memory, {}, {}};
    }
  }

  char name[24];
  std::snprintf(name, sizeof(name), "lz_%016llx", static_cast<unsigned long long>(fnv1a(key)));
  std::optional<DiskObjectStore> disk;
  if (!disk_directory.empty()) disk.emplace(disk_directory);
  JitKernel built = build_kernel(kernel, flat, name, disk ? &*disk : nullptr, dump);

  auto compiled = std::make_shared<CompiledKernel>();
  compiled->name = name;
  compiled->flat = flat;
  compiled->phases = std::move(built.phases);
  const KernelSource source = built.from_disk ? KernelSource::Disk : KernelSource::Compiled;
  if (built.from_disk) {
    counters.cache_hits.fetch_add(1, std::memory_order_relaxed);
    counters.disk_cache_hits.fetch_add(1, std::memory_order_relaxed);
  } else {
    counters.cache_misses.fetch_add(1, std::memory_order_relaxed);
    counters.kernels_compiled.fetch_add(1, std::memory_order_relaxed);
  }
  counters.compile_microseconds.fetch_add(static_cast<int64_t>(built.times.total() * 1e3),
                                          std::memory_order_relaxed);
  {
    std::lock_guard lock(cache.mutex);
    // Another thread may have compiled the same kernel meanwhile; either copy is good.
    cache.kernels.insert_or_assign(std::move(key), compiled);
  }
  return {compiled, source, built.times, std::move(built.store_problem)};
}

void forget_compiled_kernels() {
  MemoryCache& cache = memory_cache();
  std::lock_guard lock(cache.mutex);
  cache.kernels.clear();
}

}  // namespace lz::codegen
