// The peer columns (numpy, and with --peers JAX, PyTorch eager, torch.compile and Dr.Jit): one
// Python subprocess per framework, workload and size runs peer_reference.py on the very inputs
// lazuli gets, times the same expression with time.perf_counter, and hands its result back so
// that the row is checked like lazuli's.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "workloads.h"

namespace lazuli_bench {

struct ProcessResult {
  int exit_status = -1;  // -1: it did not start or did not exit normally
  std::string output;    // stdout; stderr goes to ours
};

/// Runs `arguments` (found on PATH) with `extra_environment` added, collecting stdout; `quiet`
/// sends the child's stderr nowhere.
ProcessResult run_process(const std::vector<std::string>& arguments,
                          const std::vector<std::string>& extra_environment, bool quiet);

/// The frameworks --peers adds after numpy.
const std::vector<std::string>& peer_frameworks();

/// One framework's run of a workload: its median, its result, or why there is none.
struct PeerRun {
  std::optional<double> median_ms;
  std::vector<float> output;  // the last run's result, row-major
  std::string problem;        // "jax not installed", ...; empty when it ran
};

/// Runs `framework` on the workload peer_reference.py calls `workload` ("mlp", or "chain:10000"
/// for a loop and its iterations) at `problem`'s shapes with the inputs `data` (one vector per
/// input), through `python` (an interpreter that can import the framework), with OpenMP and
/// BLAS limited to `threads`.
PeerRun run_peer(const std::string& python, const std::string& framework,
                 const std::string& workload, const Problem& problem,
                 const std::vector<std::vector<float>>& data, int warmup, int repeat, int threads);

/// Whether `python -c "import numpy"` succeeds (checked once per interpreter).
bool numpy_available(const std::string& python);

}  // namespace lazuli_bench
