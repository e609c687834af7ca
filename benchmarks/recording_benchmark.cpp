// Tracing overhead: the cost of recording one op (no evaluation), and of a synchronous round
// trip through the reference interpreter. Run: build/release/benchmarks/recording_benchmark
#include <benchmark/benchmark.h>

#include <lazuli/lazuli.h>

namespace {

// Records a chain of `state.range(0)` adds on a small tensor and drops it; reports ns per op.
void BM_RecordElementwiseChain(benchmark::State& state) {
  const lz::Tensor x = lz::ones({16});
  const int64_t length = state.range(0);
  for (auto _ : state) {
    lz::Tensor y = x;
    for (int64_t i = 0; i < length; ++i) y = y + x;
    benchmark::DoNotOptimize(y.node().get());
  }
  state.SetItemsProcessed(state.iterations() * length);
  state.counters["ns_per_op"] =
      benchmark::Counter(static_cast<double>(state.iterations() * length),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_RecordElementwiseChain)->Arg(1000)->Arg(100000);

// The same op with a C++ scalar operand: each call also records a 0-d parameter node.
void BM_RecordScalarChain(benchmark::State& state) {
  const int64_t length = state.range(0);
  for (auto _ : state) {
    lz::Tensor y = lz::ones({16});
    for (int64_t i = 0; i < length; ++i) y = y * 1.0001f;
    benchmark::DoNotOptimize(y.node().get());
  }
  state.counters["ns_per_op"] =
      benchmark::Counter(static_cast<double>(state.iterations() * length),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_RecordScalarChain)->Arg(1000);

// `y = x + 1; y.wait_to_read()`: record, evaluate through the interpreter, read back.
void BM_SynchronousRoundTrip(benchmark::State& state) {
  const lz::Tensor x = lz::ones({16});
  for (auto _ : state) {
    const lz::Tensor y = x + 1;
    y.wait_to_read();
  }
}
BENCHMARK(BM_SynchronousRoundTrip);

}  // namespace

BENCHMARK_MAIN();
