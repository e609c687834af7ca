// Compiled kernels, found by the exact structure of the kernel (kernel_signature.h): in memory,
// the most recently used up to a capacity, and as object code on disk across processes.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "codegen/cpu/jit.h"
#include "plan/fusion_plan.h"
#include "plan/kernel_signature.h"

namespace lz::codegen {

enum class KernelSource { Memory, Disk, Compiled };
/// "memory", "disk" or "compiled", for the log.
const char* kernel_source_name(KernelSource source);

struct CompiledKernel {
  std::string name;  // lz_<hash of the key>, the prefix of its symbols
  plan::Sizes sizes = plan::Sizes::Exact;
  std::vector<LoadedPhase> phases;
  std::shared_ptr<const LoadedCode> code;  // keeps the phases' code loaded
};

struct KernelLookup {
  std::shared_ptr<const CompiledKernel> kernel;
  KernelSource source = KernelSource::Memory;
  CompileTimes times;  // all 0 for a memory hit
  /// Why the disk cache's entry was not used (then compiled again and replaced); empty when
  /// it was used or there was none.
  std::string disk_problem;
};

/// The compiled code of `kernel` (is_compilable), writing outputs over inputs as `written_over`
/// says, compiling it on a miss. `disk_directory` empty: no disk cache. `dump`, when given,
/// receives the kernel's IR and assembly (a memory hit then compiles again to produce them). Counts
/// cache_hits, cache_misses, disk_cache_hits, kernels_compiled and compile_microseconds in
/// lz::stats(). Compiles without holding the cache's lock. Throws plan::UnsupportedKernel when the
/// kernel cannot be lowered.
KernelLookup find_or_compile(const plan::Kernel& kernel, const std::string& disk_directory,
                             KernelDump* dump, const plan::WrittenOver& written_over = {});

/// The default of set_memory_cache_capacity: about 50 MB of loaded code.
constexpr int64_t kDefaultMemoryCacheCapacity = 1024;

/// How many kernels the in-memory cache keeps (LZ_KERNEL_CACHE_SIZE): beyond it the least
/// recently used is dropped, and its code is unloaded once no launch runs it any more (a launch
/// holds its kernels). At least 1.
void set_memory_cache_capacity(int64_t kernels);

/// Kernels the in-memory cache holds now.
int64_t memory_cache_size();

/// Forgets the in-memory cache, so the next lookup of every kernel goes to disk or compiles
/// (tests and compile-time benchmarks). Code already loaded stays loaded: a kernel running on
/// another thread is not affected.
void forget_compiled_kernels();

}  // namespace lz::codegen
