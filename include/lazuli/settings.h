// Settings: each has an environment variable, read once at start-up, and a function that
// overrides it for the rest of the process.
#pragma once

#include <string>

namespace lz {

enum class LogLevel { Off, Info, Debug };
/// LZ_LOG=info|debug. Info prints one line per evaluation to stderr (why, where, nodes, kernels,
/// time); Debug adds the time of each pass.
void set_log_level(LogLevel level);

/// LZ_DUMP=dir. Each evaluation writes its recorded IR (NNNN.<reason>.lzir and .dot) and, in
/// the folder NNNN.<reason>/, the IR after each pass (0003.after_fuse.lzir). Empty: off.
void set_dump_directory(const std::string& directory);

/// LZ_DUMP_PASSES=regex: which passes LZ_DUMP writes the IR after ("fuse|schedule"; "input" is
/// the graph before the first pass). Default ".*", all of them. Throws std::regex_error for an
/// invalid pattern.
void set_dump_passes(const std::string& pattern);

/// LZ_FUSION=0 turns fusion off: one kernel per op, for fused-versus-unfused comparisons.
void set_fusion(bool enabled);

/// LZ_JIT=0 runs every kernel through the reference interpreter instead of compiling it with the
/// CPU JIT (LLVM ORC), to tell a code generation problem from anything else.
void set_jit(bool enabled);

/// The directory of the on-disk kernel cache: LZ_CACHE_DIR, by default $XDG_CACHE_HOME/lazuli
/// (else ~/.cache/lazuli). LZ_CACHE=0 or an empty directory turns the disk cache off; compiled
/// kernels are still kept in memory for the process.
void set_cache_directory(const std::string& directory);

/// LZ_PASSES_OFF=cse,simplify: passes to skip, by name (see passes/pass.h). Unknown names are
/// rejected with lz::Error at the next evaluation.
void set_disabled_passes(const std::string& comma_separated_names);

}  // namespace lz
