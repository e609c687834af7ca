// The cost of a graph shape lazuli has not seen: its first evaluation (which compiles, once a
// JIT exists) against its second (served from the kernel cache).
#pragma once

#include <string>
#include <vector>

#include "report.h"
#include "workloads.h"

namespace lazuli_bench {

/// The size compile times are measured at: small, so that compiling dominates the first call,
/// and used by no timing row, so that its graph shapes are new to the kernel cache.
inline constexpr int64_t kCompileTimeElements = 1024;

/// Adds one CompileRow per workload: the wall time of recording and evaluating it twice, and
/// what lz::stats() counted during each (kernels compiled, cache hits and misses).
void measure_compile_time(const std::string& suite, const std::vector<const Workload*>& workloads,
                          Report& report);

}  // namespace lazuli_bench
