// Reductions over the last axis (rows) and over the first (columns, as a bias gradient sums a
// batch), from a computed input: the time of one evaluation of lz::sum.
// Run: build/release/benchmarks/reduction_benchmark
#include <benchmark/benchmark.h>

#include <lazuli/lazuli.h>

namespace {

// Args: rows, columns, the reduced axis.
void BM_SumOverAxis(benchmark::State& state) {
  const lz::Tensor x = lz::random_uniform({state.range(0), state.range(1)}, /*seed=*/1);
  x.wait_to_read();
  const int axis = static_cast<int>(state.range(2));
  lz::sum(x, axis).wait_to_read();  // compiles
  for (auto _ : state) lz::sum(x, axis).wait_to_read();
  state.SetBytesProcessed(state.iterations() * state.range(0) * state.range(1) *
                          static_cast<int64_t>(sizeof(float)));
}
BENCHMARK(BM_SumOverAxis)
    ->ArgNames({"rows", "columns", "axis"})
    ->Args({64, 128, 1})
    ->Args({64, 128, 0})
    ->Args({512, 1024, 1})
    ->Args({512, 1024, 0})
    ->Args({4096, 4096, 1})
    ->Args({4096, 4096, 0})
    ->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
