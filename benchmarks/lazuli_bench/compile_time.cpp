#include "compile_time.h"

#include "timing.h"

namespace lazuli_bench {
namespace {

struct Evaluation {
  double milliseconds = 0;
  lz::Stats counted;
};

Evaluation evaluate_once(const Workload& workload, const std::vector<lz::Tensor>& inputs) {
  const lz::Stats before = lz::stats();
  const Stopwatch stopwatch;
  const lz::Tensor result = workload.build(inputs);
  result.wait_to_read();
  Evaluation evaluation;
  evaluation.milliseconds = stopwatch.milliseconds();
  evaluation.counted = stats_difference(lz::stats(), before);
  return evaluation;
}

}  // namespace

void measure_compile_time(const std::string& suite, const std::vector<const Workload*>& workloads,
                          Report& report) {
  bool served_from_cache = false;
  for (const Workload* workload : workloads) {
    const Problem problem = workload->problem(kCompileTimeElements);
    std::vector<std::vector<float>> data;
    for (size_t i = 0; i < problem.inputs.size(); ++i) {
      data.push_back(random_input(problem.inputs[i], i + 1));
    }
    const std::vector<lz::Tensor> inputs = lazuli_inputs(problem, data);
    const Evaluation first = evaluate_once(*workload, inputs);
    const Evaluation second = evaluate_once(*workload, inputs);
    CompileRow row;
    row.suite = suite;
    row.workload = workload->name;
    row.shape = problem.shape_label;
    row.first_ms = first.milliseconds;
    row.second_ms = second.milliseconds;
    row.first_compiled = first.counted.kernels_compiled;
    row.first_cache_hits = first.counted.cache_hits;
    row.first_cache_misses = first.counted.cache_misses;
    row.first_kernels = first.counted.kernels_launched;
    row.second_compiled = second.counted.kernels_compiled;
    row.second_cache_hits = second.counted.cache_hits;
    row.second_cache_misses = second.counted.cache_misses;
    row.second_kernels = second.counted.kernels_launched;
    report.add(std::move(row));
    served_from_cache =
        served_from_cache || (first.counted.kernels_compiled == 0 && first.counted.cache_hits > 0);
  }
  if (served_from_cache) {
    report.note(
        "a first evaluation found its kernels in the cache without compiling: they were "
        "probably compiled by an earlier run and kept in the on-disk kernel cache; run with "
        "LZ_CACHE=0 to measure compiling");
  }
}

}  // namespace lazuli_bench
