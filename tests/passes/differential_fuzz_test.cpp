// Differential fuzzing of the pass pipeline: random graphs are computed by the reference
// interpreter as they are, and by the kernel executor after the default pipeline (fusion on, off,
// and with tiny kernel bounds), strict: compiled, not interpreted, but for an allowlist of
// kernels left to the interpreter by design; every output must agree. On a CUDA device (skipped
// without one), the fused variant runs there too: NVRTC kernels, cuBLAS matmuls and device copies
// of the leaves.
//
// CI runs a fixed set of seeds. A longer campaign (graph k uses seed LAZULI_FUZZ_SEED + k):
//
//   LAZULI_FUZZ_GRAPHS=100000 LAZULI_FUZZ_SEED=1000 build/release/tests/passes/passes_fuzz_tests
//
// (LAZULI_FUZZ_CUDA_GRAPHS sets the number of graphs run on the CUDA device, 100 by default.)
//
// A failure prints the graph as IR text and the command that replays it
// (`lazuli-opt graph.lzir --run --seed=S`): data leaves are filled and outputs compared by
// reference/differential_check.h, as in lazuli-opt --run, so the replay computes the same values.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "codegen/cuda/nvrtc.h"
#include "ir/clone.h"
#include "ir/graph.h"
#include "ir/node.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "lazuli/device.h"
#include "lazuli/error.h"
#include "lazuli/stats.h"
#include "memory/buffer.h"
#include "passes/pass.h"
#include "passes/pass_manager.h"
#include "passes/plan_cache.h"
#include "plan/kernel_layout.h"
#include "reference/differential_check.h"
#include "reference/interpreter.h"
#include "runtime/kernel_executor.h"
#include "support/environment.h"
#include "tests/passes/graph_generator.h"
#include "tests/require_cuda.h"

namespace lz::passes {
namespace {

using ir::NodePtr;
using ir::Op;
using test::GraphGenerator;

// ---------------------------------------------------------------------------------------------
// Settings, read once.

struct FuzzSettings {
  uint64_t first_seed = 0;
  int graphs = 500;       // the CI set: a few seconds
  int cuda_graphs = 100;  // on a CUDA device, where each kernel is compiled by NVRTC
};

const FuzzSettings& fuzz_settings() {
  static const FuzzSettings settings = [] {
    FuzzSettings result;
    constexpr int64_t kMaxGraphs = std::numeric_limits<int>::max();
    result.graphs =
        static_cast<int>(support::integer_from_environment("LAZULI_FUZZ_GRAPHS", 0, kMaxGraphs)
                             .value_or(result.graphs));
    result.cuda_graphs =
        static_cast<int>(support::integer_from_environment("LAZULI_FUZZ_CUDA_GRAPHS", 0, kMaxGraphs)
                             .value_or(result.cuda_graphs));
    result.first_seed =
        static_cast<uint64_t>(support::integer_from_environment("LAZULI_FUZZ_SEED", 0).value_or(0));
    return result;
  }();
  return settings;
}

// ---------------------------------------------------------------------------------------------
// Running one graph.

struct Variant {
  const char* name;
  PassOptions options;
  const char* flags;  // the lazuli-opt options that select it
};

std::vector<Variant> variants() {
  PassOptions unfused;
  unfused.fusion = false;
  PassOptions tiny;
  tiny.max_kernel_ops = 3;
  tiny.max_kernel_inputs = 3;
  tiny.streams = 3;
  return {{"fused", {}, ""},
          {"unfused", unfused, " --no-fusion"},
          {"tiny kernels", tiny, " --max-kernel-ops=3 --max-kernel-inputs=3 --streams=3"}};
}

std::vector<std::string> split_pipeline(std::string_view pipeline) {
  std::vector<std::string> names;
  std::stringstream stream{std::string(pipeline)};
  for (std::string name; std::getline(stream, name, ',');) names.push_back(name);
  return names;
}

std::string join(const std::vector<std::string>& names, size_t count) {
  std::string text;
  for (size_t i = 0; i < count; ++i) text += (i ? "," : "") + names[i];
  return text;
}

// ---------------------------------------------------------------------------------------------
// Kernels the interpreter runs by design. The optimized side must be compiled code, or the
// fuzzer compares the interpreter with itself: it runs strict (ExecutionOptions::jit_strict),
// where a kernel the CPU JIT refuses fails the graph, naming the kernel and why. The allowlist
// below names the kernels the JIT leaves to the interpreter on purpose, each with its reason; a
// plan holding some runs lenient instead, and must interpret exactly those
// (lz::stats().kernels_interpreted).

/// Why the interpreter runs `node`'s kernel on the CPU by design, or nullptr: the JIT or a
/// library must run it.
const char* interpreted_by_design(const ir::Node& node) {
  if (node.op == Op::MatMul && !is_floating(node.dtype)) {
    return "a matmul of integers or bools: the JIT compiles no matmul, and BLAS multiplies only "
           "float32 and float64 matrices";
  }
  return nullptr;
}

/// The kernels of `context`'s plan that interpreted_by_design names: one per node without a
/// plan (a prefix of the pipeline before "fuse").
int64_t kernels_interpreted_by_design(const PassContext& context) {
  const auto listed = [](const NodePtr& node) {
    return !node->is_evaluated() && interpreted_by_design(*node) != nullptr;
  };
  if (!context.fusion) {
    return std::count_if(context.graph.nodes.begin(), context.graph.nodes.end(), listed);
  }
  return std::count_if(context.fusion->kernels.begin(), context.fusion->kernels.end(),
                       [&](const plan::Kernel& kernel) {
                         return std::any_of(kernel.nodes.begin(), kernel.nodes.end(), listed);
                       });
}

/// Whether a run must compile every kernel the allowlist does not name, or may interpret any
/// (guilty_pass, which looks for a pass that changed a value, not for a refused kernel).
enum class Compiled { Strictly, Leniently };

/// Executes `context`, the optimized `graph`, as `execution` says (strictly: strict unless the
/// plan holds kernels interpreted by design, then interpreting exactly those) and compares the
/// outputs with `reference` (one buffer per graph node). Returns "" when they agree.
std::string run_and_compare(const ir::Graph& graph,
                            const std::vector<std::shared_ptr<memory::Buffer>>& reference,
                            const PassContext& context,
                            const runtime::ExecutionOptions& execution = {},
                            Compiled compiled = Compiled::Strictly) {
  try {
    runtime::ExecutionOptions options = execution;
    const int64_t allowed =
        options.device.kind() == Device::Kind::Cpu ? kernels_interpreted_by_design(context) : 0;
    options.jit_strict = compiled == Compiled::Strictly && allowed == 0;
    const int64_t interpreted_before = lz::stats().kernels_interpreted;
    const std::vector<std::shared_ptr<memory::Buffer>> optimized =
        runtime::execute(context.graph, context.fusion.get(), options);
    const int64_t interpreted = lz::stats().kernels_interpreted - interpreted_before;
    if (compiled == Compiled::Strictly && interpreted != allowed) {
      return "the executor interpreted " + std::to_string(interpreted) + " kernels, where the " +
             "allowlist (interpreted_by_design) names " + std::to_string(allowed);
    }
    if (optimized.size() != graph.outputs.size()) {
      return "execute returned " + std::to_string(optimized.size()) + " buffers for " +
             std::to_string(graph.outputs.size()) + " outputs";
    }
    const auto position = graph.index();
    for (size_t i = 0; i < graph.outputs.size(); ++i) {
      const int64_t node = position.at(graph.outputs[i].get());
      const std::string difference = reference::compare_buffers(
          reference[node].get(), optimized[i] ? &optimized[i]->host() : nullptr,
          graph.outputs[i]->shape, reference::precision_of(*graph.outputs[i]));
      if (!difference.empty()) {
        return "output " + std::to_string(i) + " (%" + std::to_string(node) + "): " + difference;
      }
    }
    return "";
  } catch (const Error& error) {
    return std::string("lz::Error: ") + error.what();
  }
}

/// Runs `pipeline` over a clone of `graph`, executes it as `execution` says and compares the
/// outputs with `reference` (one buffer per graph node). Returns "" when they agree.
std::string optimize_and_compare(const ir::Graph& graph,
                                 const std::vector<std::shared_ptr<memory::Buffer>>& reference,
                                 std::string_view pipeline, const PassOptions& options,
                                 const runtime::ExecutionOptions& execution = {},
                                 Compiled compiled = Compiled::Strictly) {
  try {
    PassContext context(ir::clone_graph(graph), options);
    PassManager manager(pipeline);
    manager.set_observer([](int position, std::string_view pass, const PassContext& current) {
      if (position == 0) return;
      try {
        ir::verify(current.graph);
      } catch (const Error& error) {
        throw Error("the graph after '" + std::string(pass) + "' is invalid: " + error.what());
      }
    });
    manager.run(context);
    return run_and_compare(graph, reference, context, execution, compiled);
  } catch (const Error& error) {
    return std::string("lz::Error: ") + error.what();
  }
}

/// The first pass of the default pipeline after which the results disagree, found by running
/// longer and longer prefixes of it, leniently: a kernel the JIT refuses is no pass's fault.
std::string guilty_pass(const ir::Graph& graph,
                        const std::vector<std::shared_ptr<memory::Buffer>>& reference,
                        const PassOptions& options) {
  const std::vector<std::string> names = split_pipeline(kDefaultPipeline);
  for (size_t count = 1; count <= names.size(); ++count) {
    const std::string difference = optimize_and_compare(graph, reference, join(names, count),
                                                        options, {}, Compiled::Leniently);
    if (!difference.empty()) {
      return "'" + names[count - 1] + "' (pass " + std::to_string(count) + " of " +
             std::string(kDefaultPipeline) + ": " + difference + ")";
    }
  }
  return "none: every prefix of the pipeline agrees";
}

/// The reference interpreter's buffers for `graph` (one per node, kept for its outputs), or
/// why it failed in `report`.
std::vector<std::shared_ptr<memory::Buffer>> interpret_outputs(const ir::Graph& graph,
                                                               std::string& report) {
  std::vector<bool> keep(graph.nodes.size(), false);
  const auto position = graph.index();
  for (const NodePtr& output : graph.outputs) keep[position.at(output.get())] = true;
  try {
    return reference::interpret(graph, keep);
  } catch (const Error& error) {
    report = std::string("  the reference interpreter failed: ") + error.what() + "\n";
    return {};
  }
}

std::string graph_report(uint64_t seed, const std::string& report, const ir::Graph& graph) {
  return "graph of seed " + std::to_string(seed) + " disagrees:\n" + report +
         "--- graph.lzir ---\n" + ir::print_graph(graph) + "------------------\n";
}

/// Generates the graph of `seed`, runs it every way (each executed as `execution` says) and
/// returns a report of what disagrees ("" when everything agrees).
std::string check_seed(uint64_t seed, int64_t extent_offset = 0,
                       const runtime::ExecutionOptions& execution = {}) {
  ir::Graph graph = GraphGenerator(seed, extent_offset).generate();
  reference::fill_data_leaves(graph, seed);
  std::string report;
  const std::vector<std::shared_ptr<memory::Buffer>> reference = interpret_outputs(graph, report);
  for (const Variant& variant : variants()) {
    if (!report.empty()) break;
    const std::string difference =
        optimize_and_compare(graph, reference, kDefaultPipeline, variant.options, execution);
    if (difference.empty()) continue;
    report += "  " + std::string(variant.name) + ": " + difference + "\n" +
              "  first disagreeing after: " + guilty_pass(graph, reference, variant.options) +
              "\n  replay: lazuli-opt graph.lzir --run --seed=" + std::to_string(seed) +
              variant.flags + "\n";
  }
  if (report.empty()) return "";
  return graph_report(seed, report, graph);
}

/// The graph of `seed` recorded again: the same structure, new data buffers (with the first
/// recording's contents: the JIT's float32 transcendentals may differ from the interpreter's by
/// an ulp, which a later astype to float64 shows, so new contents would fail graphs for reasons
/// unrelated to the cache), other random seeds, and, with `new_scalars`, every constant and
/// range moved (a constant may then change class, and the plan cache miss).
ir::Graph recorded_again(uint64_t seed, bool new_scalars) {
  ir::Graph graph = GraphGenerator(seed).generate();
  reference::fill_data_leaves(graph, seed);
  for (const NodePtr& node : graph.nodes) {
    if (node->op == Op::RandomUniform || node->op == Op::RandomNormal) ++node->seed;
    if (!new_scalars || (node->op != Op::Full && node->op != Op::Arange)) continue;
    for (ir::ScalarParam& param : node->params) {
      if (is_floating(node->dtype)) {
        param = ir::ScalarParam::of(param.floating * 0.75);
      } else if (node->dtype != bool_) {
        param = ir::ScalarParam::of_integer(param.integer + 1);
      }
    }
  }
  return graph;
}

/// The graph of `seed` recorded three times (as generated, with other data and seeds, then
/// with other scalars too), each prepared through `cache` and compared with the interpreter.
/// Counts the second recordings, and those that reused the first one's result.
struct SecondRecordings {
  int prepared = 0;
  int hits = 0;
};
std::string check_seed_through_plan_cache(uint64_t seed, PlanCache& cache,
                                          SecondRecordings& second) {
  const auto run = [](PassContext& context) { PassManager(kDefaultPipeline).run(context); };
  for (int recording = 1; recording <= 3; ++recording) {
    ir::Graph graph =
        recording == 1 ? GraphGenerator(seed).generate() : recorded_again(seed, recording == 3);
    if (recording == 1) reference::fill_data_leaves(graph, seed);
    std::string failed;
    const std::vector<std::shared_ptr<memory::Buffer>> reference = interpret_outputs(graph, failed);
    if (!failed.empty()) return "";  // check_seed reports what the interpreter refuses
    PlanCache::Lookup lookup =
        cache.look_up(graph, ir::Wiring::of(graph), std::string(kDefaultPipeline), {});
    const bool hit = lookup.hit();
    const PassContext context = cache.complete(std::move(lookup), run);
    if (recording == 2) {
      ++second.prepared;
      second.hits += hit ? 1 : 0;
    }
    const std::string difference = run_and_compare(graph, reference, context);
    if (!difference.empty()) {
      const std::string report = "  recording " + std::to_string(recording) +
                                 " through the plan cache (" + (hit ? "hit" : "miss") +
                                 "): " + difference + "\n";
      return graph_report(seed, report, graph);
    }
  }
  return "";
}

bool has_integer_matmul(const ir::Graph& graph) {
  return std::any_of(graph.nodes.begin(), graph.nodes.end(), [](const NodePtr& node) {
    return node->op == Op::MatMul && !is_floating(node->dtype);
  });
}

/// The graph of `seed`, fused, on CUDA device 0 against the interpreter: "" when they agree,
/// "skip" for a graph with an integer matmul (cuBLAS multiplies floating matrices only, and
/// lazuli refuses the others on a GPU, as CudaExecutionTest checks).
std::string check_seed_on_cuda(uint64_t seed) {
  ir::Graph graph = GraphGenerator(seed).generate();
  if (has_integer_matmul(graph)) return "skip";
  reference::fill_data_leaves(graph, seed);
  std::string report;
  const std::vector<std::shared_ptr<memory::Buffer>> reference = interpret_outputs(graph, report);
  if (report.empty()) {
    runtime::ExecutionOptions on_cuda;
    on_cuda.device = Device::cuda(0);
    const std::string difference =
        optimize_and_compare(graph, reference, kDefaultPipeline, {}, on_cuda);
    if (!difference.empty()) report = "  fused on cuda:0: " + difference + "\n";
  }
  return report.empty() ? "" : graph_report(seed, report, graph);
}

// ---------------------------------------------------------------------------------------------
// Tests.

TEST(DifferentialFuzzTest, OptimizedGraphsAgreeWithTheInterpreter) {
  const FuzzSettings& settings = fuzz_settings();
  int failures = 0;
  for (int k = 0; k < settings.graphs; ++k) {
    const uint64_t seed = settings.first_seed + static_cast<uint64_t>(k);
    const std::string report = check_seed(seed);
    if (report.empty()) continue;
    ++failures;
    if (failures <= 5) ADD_FAILURE() << report;
  }
  EXPECT_EQ(failures, 0) << failures << " of " << settings.graphs
                         << " graphs disagree (the first 5 are shown above)";
}

// Extents of 17 to 20: shaped CPU kernels read them at run time (plan::Sizes::Runtime), and a
// kernel compiled for one graph serves any later one with its key. A fifth of the graphs, as
// each is some hundred times larger.
TEST(DifferentialFuzzTest, GraphsOfRuntimeExtentsAgreeWithTheInterpreter) {
  const FuzzSettings& settings = fuzz_settings();
  const int graphs = settings.graphs / 5;
  int failures = 0;
  for (int k = 0; k < graphs; ++k) {
    const std::string report =
        check_seed(settings.first_seed + static_cast<uint64_t>(k), /*extent_offset=*/15);
    if (report.empty()) continue;
    ++failures;
    if (failures <= 5) ADD_FAILURE() << report;
  }
  EXPECT_EQ(failures, 0) << failures << " of " << graphs
                         << " graphs disagree (the first 5 are shown above)";
}

// Flat kernels whose outputs take 256 bytes or more stream them (plan::cpu_streams_outputs), so
// the graphs' kernels land on both sides of the threshold: non-temporal stores from the first
// aligned position on, ordinary ones before it and in the vector loop's tail.
TEST(DifferentialFuzzTest, GraphsWithStreamedOutputsAgreeWithTheInterpreter) {
  const FuzzSettings& settings = fuzz_settings();
  const int graphs = settings.graphs / 5;
  plan::set_cpu_streaming_threshold_bytes(256);
  int failures = 0;
  for (int k = 0; k < graphs; ++k) {
    const std::string report =
        check_seed(settings.first_seed + 7919 + static_cast<uint64_t>(k), /*extent_offset=*/15);
    if (report.empty()) continue;
    ++failures;
    if (failures <= 5) ADD_FAILURE() << report;
  }
  plan::set_cpu_streaming_threshold_bytes(-1);
  EXPECT_EQ(failures, 0) << failures << " of " << graphs
                         << " graphs disagree (the first 5 are shown above)";
}

// Every output of a compiled kernel that may take the memory of an input dying there does
// (ExecutionOptions::in_place_from_bytes 0, where by default only outputs of 1 MiB or more do):
// its code then stores through the input's pointer, after every read of the input at that
// position. The generated graphs' data leaves are held by the test, so only intermediates die.
TEST(DifferentialFuzzTest, GraphsWrittenInPlaceAgreeWithTheInterpreter) {
  const FuzzSettings& settings = fuzz_settings();
  const int graphs = settings.graphs / 5;
  runtime::ExecutionOptions in_place;
  in_place.in_place_from_bytes = 0;
  const int64_t written_before = lz::stats().outputs_written_in_place;
  int failures = 0;
  for (int k = 0; k < graphs; ++k) {
    const std::string report =
        check_seed(settings.first_seed + 104729 + static_cast<uint64_t>(k), 0, in_place);
    if (report.empty()) continue;
    ++failures;
    if (failures <= 5) ADD_FAILURE() << report;
  }
  EXPECT_EQ(failures, 0) << failures << " of " << graphs
                         << " graphs disagree (the first 5 are shown above)";
  EXPECT_GE(lz::stats().outputs_written_in_place - written_before, graphs)
      << "few outputs were written in place: the test no longer tests it";
}

// A graph recorded again with new values reuses the first one's optimized graph and kernels:
// the reused result must compute what the interpreter computes for the new values.
TEST(DifferentialFuzzTest, GraphsFromThePlanCacheAgreeWithTheInterpreter) {
  const FuzzSettings& settings = fuzz_settings();
  PlanCache cache;
  int failures = 0;
  SecondRecordings second;
  for (int k = 0; k < settings.graphs; ++k) {
    const std::string report = check_seed_through_plan_cache(
        settings.first_seed + static_cast<uint64_t>(k), cache, second);
    if (report.empty()) continue;
    ++failures;
    if (failures <= 5) ADD_FAILURE() << report;
  }
  EXPECT_EQ(failures, 0) << failures << " of " << settings.graphs
                         << " graphs disagree (the first 5 are shown above)";
  // New data and seeds change no structure: every graph the interpreter computes must hit.
  EXPECT_EQ(second.hits, second.prepared);
}

TEST(DifferentialFuzzTest, OptimizedGraphsAgreeWithTheInterpreterOnACudaDevice) {
  if (!cuda::is_available()) {
    LAZULI_SKIP_WITHOUT_CUDA("no CUDA device: " << cuda::unavailable_reason());
  }
  std::string why;
  if (!codegen::cuda::nvrtc_available(&why)) LAZULI_SKIP_WITHOUT_CUDA("no NVRTC: " << why);
  const FuzzSettings& settings = fuzz_settings();
  int failures = 0;
  int checked = 0;
  for (int k = 0; checked < settings.cuda_graphs; ++k) {
    const std::string report = check_seed_on_cuda(settings.first_seed + static_cast<uint64_t>(k));
    if (report == "skip") continue;
    ++checked;
    if (report.empty()) continue;
    ++failures;
    if (failures <= 5) ADD_FAILURE() << report;
  }
  EXPECT_EQ(failures, 0) << failures << " of " << checked
                         << " graphs disagree on cuda:0 (the first 5 are shown above)";
}

// The generator must keep reaching every op and dtype, or the fuzzer silently tests less.
TEST(DifferentialFuzzTest, GeneratedGraphsUseEveryOpAndDtype) {
  std::set<Op> ops;
  std::set<DType> dtypes;
  int reductions_with_keepdims = 0;
  int shared_nodes = 0;
  int intermediate_outputs = 0;
  int matmul_epilogues = 0;     // passes/matmul_epilogues.h
  int allowlisted_kernels = 0;  // the allowlist's lenient path runs too
  for (uint64_t seed = 0; seed < 300; ++seed) {
    const ir::Graph graph = GraphGenerator(seed).generate();
    PassContext optimized(ir::clone_graph(graph));
    PassManager(kDefaultPipeline).run(optimized);
    for (const plan::Kernel& kernel : optimized.fusion->kernels) {
      matmul_epilogues += kernel.epilogue >= 0 ? 1 : 0;
    }
    allowlisted_kernels += static_cast<int>(kernels_interpreted_by_design(optimized));
    std::unordered_map<const ir::Node*, int> consumers;
    for (const NodePtr& node : graph.nodes) {
      ops.insert(node->op);
      dtypes.insert(node->dtype);
      if (ir::op_info(node->op).kind == ir::OpKind::Reduction && node->keepdims) {
        ++reductions_with_keepdims;
      }
      for (const NodePtr& input : node->inputs) ++consumers[input.get()];
    }
    for (const auto& [node, count] : consumers) shared_nodes += count > 1 ? 1 : 0;
    for (const NodePtr& output : graph.outputs) {
      intermediate_outputs += consumers.contains(output.get()) ? 1 : 0;
    }
  }
  for (int i = 0; i < ir::kOpCount; ++i) {
    // A collective's value depends on other processes: tests/distributed runs those under mpirun.
    if (ir::op_info(static_cast<Op>(i)).fuzz == ir::FuzzDomain::Excluded) continue;
    EXPECT_TRUE(ops.contains(static_cast<Op>(i)))
        << "no generated graph uses " << ir::op_name(static_cast<Op>(i));
  }
  for (DType dtype : kAllDTypes) {
    EXPECT_TRUE(dtypes.contains(dtype)) << "no generated graph uses " << dtype_name(dtype);
  }
  EXPECT_GT(reductions_with_keepdims, 10);
  EXPECT_GT(shared_nodes, 100);
  EXPECT_GT(intermediate_outputs, 100);
  EXPECT_GT(matmul_epilogues, 10);
  EXPECT_GT(allowlisted_kernels, 10);
}

// A failure is replayed from its printed text, so the text must read back to the same graph.
TEST(DifferentialFuzzTest, PrintedGraphsParseBackToTheSameText) {
  for (uint64_t seed = 0; seed < 100; ++seed) {
    const ir::Graph graph = GraphGenerator(seed).generate();
    const std::string text = ir::print_graph(graph);
    ir::ParsedGraph parsed = ir::parse_graph(text);
    EXPECT_EQ(ir::print_graph(parsed.graph), text) << "seed " << seed;
  }
}

}  // namespace
}  // namespace lz::passes
