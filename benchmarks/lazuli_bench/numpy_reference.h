// The numpy column: one python3 subprocess per workload and size runs numpy_reference.py, which
// builds the same inputs and times the same expression with time.perf_counter.
#pragma once

#include <optional>

#include "workloads.h"

namespace lazuli_bench {

/// Whether `python3 -c "import numpy"` succeeds (checked once).
bool numpy_available();

/// The median milliseconds numpy takes for `workload` at `problem`'s shapes, with OpenBLAS and
/// OpenMP limited to `threads`; empty when numpy is missing or the script fails.
std::optional<double> numpy_median_milliseconds(const Workload& workload, const Problem& problem,
                                                int warmup, int repeat, int threads);

}  // namespace lazuli_bench
