// Tracing overhead: the cost of recording one op (no evaluation), of finding a compiled kernel
// in memory, and of a synchronous round trip (record, passes, cached kernel, read back).
// Run: build/release/benchmarks/recording_benchmark
#include <benchmark/benchmark.h>

#include <lazuli/lazuli.h>

#include "codegen/cpu/kernel_cache.h"
#include "plan/fusion_plan.h"

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

// A kernel cache hit for a 10-op fused kernel: its exact key built from the nodes, then the
// in-memory lookup (what an evaluation pays per kernel once the kernel is compiled).
void BM_KernelCacheHit10Ops(benchmark::State& state) {
  lz::set_cache_directory("");
  const lz::Tensor x = lz::ones({1024});
  x.wait_to_read();
  lz::Tensor y = x;
  lz::plan::Kernel kernel;
  kernel.inputs = {x.node()};
  for (int i = 0; i < 5; ++i) {
    const lz::Tensor scale = lz::full({}, 1.5);
    y = y * scale;
    kernel.nodes.push_back(scale.node());
    kernel.nodes.push_back(y.node());
  }
  kernel.outputs = {y.node()};
  lz::codegen::find_or_compile(kernel, "", nullptr);  // compiles once
  for (auto _ : state) {
    benchmark::DoNotOptimize(lz::codegen::find_or_compile(kernel, "", nullptr).kernel.get());
  }
}
BENCHMARK(BM_KernelCacheHit10Ops);

// `y = x + 1; y.wait_to_read()`: record, evaluate (passes, a cached kernel), read back.
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
