// Settings: each has an environment variable, read once at start-up, and a function that
// overrides it for the rest of the process. A variable holding a value lazuli cannot use is
// reported once on stderr and ignored; the function given such a value throws lz::Error.
#pragma once

#include <cstdint>
#include <string>

#include "lazuli/log_level.h"

namespace lz {

/// LZ_LOG=info|debug (lazuli/log_level.h says what each level prints).
void set_log_level(LogLevel level);

/// LZ_DUMP=dir. Each evaluation writes its recorded IR (NNNN.<reason>.lzir and .dot) and, in
/// the folder NNNN.<reason>/, the IR after each pass (0003.after_fuse.lzir). Empty: off. Throws
/// lz::Error for a directory that cannot be made or takes no file; a dump that later cannot be
/// written (a full disk) turns dumping off, saying so once on stderr.
void set_dump_directory(const std::string& directory);

/// LZ_DUMP_PASSES=regex: which passes LZ_DUMP writes the IR after ("fuse|schedule"; "input" is
/// the graph before the first pass). Default ".*", all of them. Throws lz::Error for an invalid
/// pattern; an invalid LZ_DUMP_PASSES is reported on stderr and ignored.
void set_dump_passes(const std::string& pattern);

/// Switches (LZ_FUSION, LZ_JIT, LZ_PLAN_CACHE, LZ_CACHE) take 1, on, true or yes, and 0, off, false
/// or no, in any case (LZ_JIT also strict); anything else is reported on stderr and leaves the
/// default.

/// LZ_FUSION=0 turns fusion off: one kernel per op, for fused-versus-unfused comparisons.
void set_fusion(bool enabled);

/// LZ_JIT=0 runs every kernel through the reference interpreter instead of compiling it with the
/// CPU JIT (LLVM ORC), to tell a code generation problem from anything else.
void set_jit(bool enabled);

/// LZ_JIT=strict (the JIT on, and strict). By default a kernel the CPU JIT does not compile (a
/// shape its lowering refuses, a matmul of integers, which BLAS does not take) runs through the
/// reference interpreter, as LZ_LOG=info says. Strict, such a kernel fails its op instead, with
/// an lz::Error naming the op, the line that recorded it, the kernel and why the JIT refused it:
/// for tests of compiled code, which a silent fallback would turn into the interpreter compared
/// with itself. No effect while the JIT is off (set_jit(false) interprets every kernel).
void set_jit_strict(bool strict);

/// LZ_PLAN_CACHE=0 runs the passes at every evaluation. By default a graph recorded again with
/// the same structure (ops, shapes, wiring; new data, scalars, seeds or slice starts) reuses the
/// optimized graph and kernels of the first one (passes/plan_cache.h); lz::stats() counts the
/// hits and misses, and LZ_LOG=info says which each evaluation was. Dumping (LZ_DUMP) runs the
/// passes every time.
void set_plan_cache(bool enabled);

/// LZ_IN_PLACE=0 gives every kernel output memory of its own. By default a CPU kernel writes an
/// output of 1 MiB or more over an input of its dtype and size that nothing can read after the
/// kernel (no tensor holds it, no later kernel reads it, numpy and DLPack were never given its
/// memory): an optimizer's new parameters and moments over the old ones, so a training step
/// holds one copy of its state. lz::stats() counts outputs_written_in_place.
void set_in_place(bool enabled);

/// The directory of the on-disk kernel cache: LZ_CACHE_DIR, by default $XDG_CACHE_HOME/lazuli
/// (else ~/.cache/lazuli). LZ_CACHE=0 or an empty directory turns the disk cache off; compiled
/// kernels are still kept in memory for the process.
void set_cache_directory(const std::string& directory);

/// LZ_KERNEL_CACHE_SIZE (default 1024): compiled kernels kept in memory. Beyond it the least
/// recently used is dropped and its code unloaded (a later use loads it from the disk cache or
/// compiles it again). At least 1; a smaller value throws lz::Error.
void set_kernel_cache_size(int64_t kernels);

/// LZ_PASSES_OFF=cse,simplify: passes to skip, by name (dce, cse, simplify, fuse, schedule),
/// spaces around a name allowed. Throws lz::Error for a name that is no pass.
void set_disabled_passes(const std::string& comma_separated_names);

/// How recorded work is run. Async (the default): a blocking point, or a bound, launches the
/// pending graph on the devices' streams and the frontend waits only where it must. Sync
/// (LZ_ENGINE=sync): every op is computed on the calling thread as it is recorded, so a failure
/// surfaces at the line that recorded it (a debugging mode: no fusion across ops).
enum class Engine { Async, Sync };
void set_engine(Engine engine);

/// LZ_MAX_PENDING_NODES (default 10,000): when more recorded nodes than this are pending, the
/// pending graph is launched asynchronously, so a loop that never blocks still runs in bounded
/// memory. 0 turns the bound off; a negative count throws lz::Error.
void set_max_pending_nodes(int64_t nodes);

/// LZ_MAX_IN_FLIGHT (default 32, at least 1): launched evaluations not finished yet, beyond which
/// the next launch waits for the oldest (back-pressure). A count below 1 throws lz::Error.
void set_max_in_flight(int64_t evaluations);

/// LZ_MEMORY_LIMIT (bytes; default 80% of the physical memory): tensor buffers alive at once may
/// not exceed it. A launch first waits while the results of launches in flight total more than
/// half of it (back-pressure); an allocation that exceeds it fails its op with an lz::Error raised
/// at the next blocking point that needs it. 0 restores the default; a negative value throws
/// lz::Error.
void set_memory_limit(int64_t bytes);

}  // namespace lz
