#include "codegen/cuda/program_cache.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <optional>

#include "codegen/cuda/nvrtc.h"
#include "codegen/disk_cache.h"
#include "plan/kernel_signature.h"
#include "support/statistics.h"
#include "support/trace.h"

namespace lz::codegen::cuda {
namespace {

// A stored entry is one byte saying what the image is, then the image.
constexpr char kCubinTag = 'C';
constexpr char kPtxTag = 'P';

std::string disk_key(const std::string& architecture, const std::string& translation_unit) {
  return "lazuli cuda program\n" + architecture + "\nnvrtc " + nvrtc_version() + "\n" +
         translation_unit;
}

/// The program's image from a stored entry; false for an entry this version did not write.
bool read_entry(const std::string& entry, CudaProgram& program) {
  if (entry.size() < 2 || (entry[0] != kCubinTag && entry[0] != kPtxTag)) return false;
  program.is_ptx = entry[0] == kPtxTag;
  program.image.assign(entry.begin() + 1, entry.end());
  return !program.is_ptx || program.image.back() == '\0';
}

void store_entry(DiskCache& cache, const std::string& key, const CudaProgram& program) {
  std::string entry(1, program.is_ptx ? kPtxTag : kCubinTag);
  entry.append(program.image.begin(), program.image.end());
  static std::atomic<bool> warned{false};
  if (!cache.store(key, entry) && !warned.exchange(true)) {
    std::fprintf(stderr, "[lazuli] could not write to the kernel cache directory %s\n",
                 cache.directory().c_str());
  }
}

}  // namespace

std::string program_name(const plan::Kernel& kernel) {
  std::string scratch;
  char name[24];
  std::snprintf(
      name, sizeof(name), "lz_%016llx",
      static_cast<unsigned long long>(std::hash<std::string>{}(plan::cuda_key(kernel, scratch))));
  return name;
}

CudaProgram find_or_compile_program(const plan::Kernel& kernel, const std::string& architecture,
                                    const std::string& disk_directory) {
  const auto start = std::chrono::steady_clock::now();
  support::Counters& counters = support::counters();
  CudaProgram program;
  program.name = program_name(kernel);
  program.source = generate_cuda_source(kernel, program.name);
  const std::string translation_unit = program.source.translation_unit();

  std::optional<DiskCache> disk;
  std::string key;
  if (!disk_directory.empty()) {
    disk.emplace(disk_directory, DiskCache::default_max_bytes());
    key = disk_key(architecture, translation_unit);
    if (const std::optional<std::string> entry = disk->load(key);
        entry.has_value() && read_entry(*entry, program)) {
      program.from_disk = true;
    }
  }
  if (program.from_disk) {
    counters.cache_hits.fetch_add(1, std::memory_order_relaxed);
    counters.disk_cache_hits.fetch_add(1, std::memory_order_relaxed);
  } else {
    support::trace::Span span("compile", "nvrtc");
    CompiledCuda compiled = compile_cuda(translation_unit, architecture);
    program.is_ptx = compiled.cubin.empty();
    if (program.is_ptx) {
      program.image.assign(compiled.ptx.begin(), compiled.ptx.end());
      program.image.push_back('\0');
    } else {
      program.image = std::move(compiled.cubin);
    }
    if (disk.has_value()) store_entry(*disk, key, program);
    counters.cache_misses.fetch_add(1, std::memory_order_relaxed);
    counters.kernels_compiled.fetch_add(1, std::memory_order_relaxed);
  }
  program.compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  counters.compile_microseconds.fetch_add(static_cast<int64_t>(program.compile_ms * 1e3),
                                          std::memory_order_relaxed);
  return program;
}

}  // namespace lz::codegen::cuda
