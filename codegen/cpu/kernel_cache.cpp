#include "codegen/cpu/kernel_cache.h"

#include <algorithm>
#include <cstdio>
#include <list>
#include <mutex>
#include <unordered_map>

#include "codegen/disk_cache.h"
#include "plan/kernel_signature.h"
#include "support/statistics.h"

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

/// Kernels by key, with the order of their last use for evicting the least recently used.
struct MemoryCache {
  struct Entry {
    std::shared_ptr<const CompiledKernel> kernel;
    std::list<std::string>::iterator use;  // its key's place in `uses`
  };

  std::mutex mutex;
  std::unordered_map<std::string, Entry> kernels;
  std::list<std::string> uses;  // keys, the most recently used first
  int64_t capacity = kDefaultMemoryCacheCapacity;

  /// Takes out the least recently used kernels beyond the capacity. Called with the mutex held;
  /// the caller lets go of them after releasing it, as unloading code takes a while.
  std::vector<std::shared_ptr<const CompiledKernel>> trim() {
    std::vector<std::shared_ptr<const CompiledKernel>> evicted;
    while (static_cast<int64_t>(kernels.size()) > capacity) {
      const auto oldest = kernels.find(uses.back());
      evicted.push_back(std::move(oldest->second.kernel));
      kernels.erase(oldest);
      uses.pop_back();
    }
    return evicted;
  }
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

KernelLookup find_or_compile(const plan::Kernel& kernel, const std::string& disk_directory,
                             KernelDump* dump, const plan::WrittenOver& written_over) {
  support::Counters& counters = support::counters();
  std::string scratch;
  const auto [sizes, structure_key] = plan::cpu_sizes_and_key(kernel, scratch);
  std::string variant_key;  // the structure's, and which outputs are written over which inputs
  if (!written_over.empty()) {
    variant_key = structure_key + "\nwritten over:";
    for (const int input : written_over) variant_key += " " + std::to_string(input);
  }
  const std::string& key = written_over.empty() ? structure_key : variant_key;
  MemoryCache& cache = memory_cache();
  if (dump == nullptr) {
    std::lock_guard lock(cache.mutex);
    if (auto found = cache.kernels.find(key); found != cache.kernels.end()) {
      counters.cache_hits.fetch_add(1, std::memory_order_relaxed);
      cache.uses.splice(cache.uses.begin(), cache.uses, found->second.use);
      return {found->second.kernel, KernelSource::Memory, {}, {}};
    }
  }

  char name[24];
  std::snprintf(name, sizeof(name), "lz_%016llx", static_cast<unsigned long long>(fnv1a(key)));
  std::optional<DiskObjectStore> disk;
  if (!disk_directory.empty()) disk.emplace(disk_directory);
  JitKernel built = build_kernel(kernel, sizes, written_over, name, disk ? &*disk : nullptr, dump);

  auto compiled = std::make_shared<CompiledKernel>();
  compiled->name = name;
  compiled->sizes = sizes;
  compiled->phases = std::move(built.phases);
  compiled->code = std::move(built.code);
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
  std::vector<std::shared_ptr<const CompiledKernel>> evicted;
  {
    std::lock_guard lock(cache.mutex);
    // Another thread may have compiled the same kernel meanwhile; either copy is good.
    if (auto found = cache.kernels.find(key); found != cache.kernels.end()) {
      found->second.kernel = compiled;
      cache.uses.splice(cache.uses.begin(), cache.uses, found->second.use);
    } else {
      cache.uses.push_front(key);
      cache.kernels.emplace(key, MemoryCache::Entry{compiled, cache.uses.begin()});
      evicted = cache.trim();
    }
  }
  return {compiled, source, built.times, std::move(built.store_problem)};
}

void set_memory_cache_capacity(int64_t kernels) {
  MemoryCache& cache = memory_cache();
  std::vector<std::shared_ptr<const CompiledKernel>> evicted;
  std::lock_guard lock(cache.mutex);
  cache.capacity = std::max<int64_t>(1, kernels);
  evicted = cache.trim();
}

int64_t memory_cache_size() {
  MemoryCache& cache = memory_cache();
  std::lock_guard lock(cache.mutex);
  return static_cast<int64_t>(cache.kernels.size());
}

void forget_compiled_kernels() {
  MemoryCache& cache = memory_cache();
  std::unordered_map<std::string, MemoryCache::Entry> forgotten;  // unloaded after the lock
  std::lock_guard lock(cache.mutex);
  forgotten.swap(cache.kernels);
  cache.uses.clear();
}

}  // namespace lz::codegen
