// The plan cache: which recordings reuse a remembered pipeline result, and that a reused result
// computes what the interpreter computes for the new recording.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "ir/parser.h"
#include "memory/buffer.h"
#include "passes/pass_manager.h"
#include "passes/plan_cache.h"
#include "plan/fusion_plan.h"
#include "plan/kernel_signature.h"
#include "reference/differential_check.h"
#include "reference/interpreter.h"
#include "runtime/kernel_executor.h"

namespace lz::passes {
namespace {

const std::string kPipeline(kDefaultPipeline);

/// The graph of IR text `text` with its data leaves filled from `seed`.
ir::Graph recorded(std::string_view text, uint64_t seed = 1) {
  ir::Graph graph = ir::parse_graph(text).graph;
  reference::fill_data_leaves(graph, seed);
  return graph;
}

/// A context ready to run, and whether it came from the cache.
struct Prepared {
  PassContext context;
  bool hit = false;
};

/// `graph` looked up in `cache` and completed by the default pipeline, as a launch does it.
Prepared prepare(PlanCache& cache, const ir::Graph& graph, const PassOptions& options = {}) {
  PlanCache::Lookup lookup = cache.look_up(graph, ir::Wiring::of(graph), kPipeline, options);
  const bool hit = lookup.hit();
  return {cache.complete(std::move(lookup),
                         [](PassContext& context) { PassManager(kDefaultPipeline).run(context); }),
          hit};
}

class PlanCacheTest : public ::testing::Test {
 protected:
  /// Prepares `graph` through the cache, runs it and checks every output against the
  /// interpreter; returns whether it was a hit.
  bool run(const ir::Graph& graph, const PassOptions& options = {}) {
    Prepared prepared = prepare(cache_, graph, options);
    expect_interpreters_results(graph, prepared.context);
    return prepared.hit;
  }

  static void run_passes(PassContext& context) { PassManager(kDefaultPipeline).run(context); }

  /// Runs `context`, prepared for `graph`, and checks every output against the interpreter.
  static void expect_interpreters_results(const ir::Graph& graph, const PassContext& context) {
    const std::vector<std::shared_ptr<memory::Buffer>> optimized =
        runtime::execute(context.graph, context.fusion.get());
    std::vector<bool> keep(graph.nodes.size(), false);
    const auto position = graph.index();
    for (const ir::NodePtr& output : graph.outputs) keep[position.at(output.get())] = true;
    const std::vector<std::shared_ptr<memory::Buffer>> expected = reference::interpret(graph, keep);
    EXPECT_EQ(optimized.size(), graph.outputs.size());
    for (size_t i = 0; i < graph.outputs.size() && i < optimized.size(); ++i) {
      const int64_t node = position.at(graph.outputs[i].get());
      EXPECT_EQ(reference::compare_buffers(expected[node].get(), &optimized[i]->host(),
                                           graph.outputs[i]->shape),
                "")
          << "output " << i;
    }
  }

  PlanCache cache_;
};

constexpr std::string_view kAffine = R"(
  %x = data() : f32[8]
  %a = full() {value=3} : f32[]
  %b = full() {value=0.5} : f32[]
  %m = mul(%x, %a) : f32[8]
  %y = add(%m, %b) : f32[8]
  return %y
)";

TEST_F(PlanCacheTest, NewDataAndNewScalarsReuseTheResult) {
  EXPECT_FALSE(run(recorded(kAffine, 1)));
  EXPECT_TRUE(run(recorded(kAffine, 2)));
  // Other scalars of the same classes (neither one, zero, nor a power of two).
  std::string other(kAffine);
  other.replace(other.find("value=3"), 7, "value=7");
  other.replace(other.find("value=0.5"), 9, "value=-2.5");
  EXPECT_TRUE(run(recorded(other, 3)));
  EXPECT_EQ(cache_.size(), 1u);
}

// A hit's kernels share one memo of their code's key per kernel of the remembered result,
// filled by the first lookup: the key it holds is the one the kernel's structure gives.
TEST_F(PlanCacheTest, HitsShareTheKeyOfEachKernelsCode) {
  const ir::Graph first_graph = recorded(kAffine, 1), second_graph = recorded(kAffine, 2);
  const Prepared miss = prepare(cache_, first_graph);
  const Prepared first = prepare(cache_, second_graph);
  const Prepared second = prepare(cache_, recorded(kAffine, 3));
  ASSERT_FALSE(miss.hit);
  ASSERT_TRUE(first.hit && second.hit);
  ASSERT_EQ(first.context.fusion->kernels.size(), 1u);
  const plan::Kernel& kernel = first.context.fusion->kernels[0];
  ASSERT_NE(kernel.description, nullptr);
  EXPECT_EQ(kernel.description, second.context.fusion->kernels[0].description);
  std::string scratch;
  const auto [sizes, key] = plan::cpu_sizes_and_key(kernel, scratch);
  EXPECT_EQ(sizes, plan::cpu_sizes(kernel));
  EXPECT_EQ(key, plan::kernel_key(kernel, plan::cpu_sizes(kernel)));
  EXPECT_EQ(&key, &kernel.description->cpu_key) << "a hit reads the memo, building no key";
  const auto [again_sizes, again] =
      plan::cpu_sizes_and_key(second.context.fusion->kernels[0], scratch);
  EXPECT_EQ(&again, &key);
  // The CUDA code's key likewise, from the same description.
  const std::string& cuda = plan::cuda_key(kernel, scratch);
  EXPECT_EQ(cuda, plan::kernel_key(kernel, plan::exact_sizes(kernel)));
  EXPECT_EQ(&cuda, &kernel.description->cuda_key);
  EXPECT_EQ(&plan::cuda_key(second.context.fusion->kernels[0], scratch), &cuda);
  const bool memory_bound = plan::is_memory_bound(kernel);
  EXPECT_EQ(kernel.description->memory_bound.load(), memory_bound ? 1 : 0) << "remembered";
}

TEST_F(PlanCacheTest, AnyOtherStructureMisses) {
  EXPECT_FALSE(run(recorded(kAffine)));
  const auto variant = [](std::string_view from, std::string_view to) {
    std::string text(kAffine);
    size_t at = 0;
    while ((at = text.find(from, at)) != std::string::npos) {
      text.replace(at, from.size(), to);
      at += to.size();
    }
    return text;
  };
  EXPECT_FALSE(run(recorded(variant("[8]", "[9]"))));                  // shape
  EXPECT_FALSE(run(recorded(variant(": f32", ": f64"))));              // dtype
  EXPECT_FALSE(run(recorded(variant("mul(%x, %a)", "mul(%a, %x)"))));  // wiring
  EXPECT_FALSE(run(recorded(variant("return %y", "return %y, %m"))));  // kept set
  EXPECT_FALSE(run(recorded(variant("value=3", "value=1"))));          // x * 1 is x
  EXPECT_FALSE(run(recorded(variant("value=0.5", "value=-0"))));       // x + -0 is x
  EXPECT_TRUE(run(recorded(kAffine, 7)));
}

TEST_F(PlanCacheTest, ReductionAxesArePartOfTheKey) {
  // Sums over the rows and over the columns of a square matrix have one shape: only their axes
  // tell them apart, and a hit would return the other sums.
  constexpr std::string_view kColumnSums = R"(
    %x = data() : f32[5,5]
    %s = sum(%x) {axes=[0], keepdims=false} : f32[5]
    return %s
  )";
  std::string row_sums(kColumnSums);
  row_sums.replace(row_sums.find("axes=[0]"), 8, "axes=[1]");
  EXPECT_FALSE(run(recorded(kColumnSums)));
  EXPECT_FALSE(run(recorded(row_sums, 2)));
  EXPECT_TRUE(run(recorded(kColumnSums, 3)));
}

TEST_F(PlanCacheTest, TheOrderCollectivesWereRecordedInIsPartOfTheKey) {
  // The plan runs collectives in the order of their sequence numbers, which every rank shares:
  // the same graph recorded with its two sums the other way round needs the other order.
  constexpr std::string_view kTwoSums = R"(
    %x = data() : f32[4]
    %y = data() : f32[4]
    %a = all_sum(%x) {ranks=2, sequence=5} : f32[4]
    %b = all_sum(%y) {ranks=2, sequence=6} : f32[4]
    return %a, %b
  )";
  std::string swapped(kTwoSums);
  swapped.replace(swapped.find("sequence=5"), 10, "sequence=9");
  EXPECT_FALSE(prepare(cache_, recorded(kTwoSums)).hit);
  EXPECT_FALSE(prepare(cache_, recorded(swapped)).hit);
  std::string again(kTwoSums);
  again.replace(again.find("sequence=5"), 10, "sequence=7");
  again.replace(again.find("sequence=6"), 10, "sequence=8");
  EXPECT_TRUE(prepare(cache_, recorded(again)).hit) << "new numbers in the same order";
}

TEST_F(PlanCacheTest, OptionsArePartOfTheKey) {
  EXPECT_FALSE(run(recorded(kAffine)));
  PassOptions unfused;
  unfused.fusion = false;
  EXPECT_FALSE(run(recorded(kAffine), unfused));
  EXPECT_TRUE(run(recorded(kAffine), unfused));
}

/// (x * 2) * 4, which folds into x * 8.
constexpr std::string_view kChain = R"(
  %x = data() : i32[5]
  %a = full() {value=2} : i32[]
  %b = full() {value=4} : i32[]
  %m = mul(%x, %a) : i32[5]
  %n = mul(%m, %b) : i32[5]
  return %n
)";

TEST_F(PlanCacheTest, FoldedConstantsHitOnlyForTheirValues) {
  // The result of folding kChain holds for its two scalars only.
  EXPECT_FALSE(run(recorded(kChain, 1)));
  EXPECT_TRUE(run(recorded(kChain, 2)));
  std::string other(kChain);
  other.replace(other.find("value=4"), 7, "value=5");
  EXPECT_FALSE(run(recorded(other, 3)));
  EXPECT_TRUE(run(recorded(other, 4)));
  EXPECT_TRUE(run(recorded(kChain, 5)));
}

TEST_F(PlanCacheTest, ConstantsTheFoldingDidNotReadAreFreeToChange) {
  // 1 / 64 folds (a gradient's seed over a batch); the optimizer's step size, which changes at
  // every step, and the two equal momentum factors merged into one are read, never folded.
  constexpr std::string_view kStep = R"(
    %x = data() : f32[8]
    %one = full() {value=1} : f32[]
    %batch = full() {value=64} : f32[]
    %seed = div(%one, %batch) : f32[]
    %g = mul(%x, %seed) : f32[8]
    %rate = full() {value=0.01} : f32[]
    %u = mul(%g, %rate) : f32[8]
    %beta = full() {value=0.9} : f32[]
    %beta2 = full() {value=0.9} : f32[]
    %v = mul(%x, %beta) : f32[8]
    %w = mul(%u, %beta2) : f32[8]
    %y = add(%v, %w) : f32[8]
    return %y
  )";
  EXPECT_FALSE(run(recorded(kStep, 1)));
  std::string next(kStep);
  next.replace(next.find("value=0.01"), 10, "value=0.02");
  EXPECT_TRUE(run(recorded(next, 2)));
  // The merged momentum factors change together: still equal, still only read.
  std::string merged(next);
  merged.replace(merged.find("value=0.9"), 9, "value=0.8");
  merged.replace(merged.find("value=0.9"), 9, "value=0.8");
  EXPECT_TRUE(run(recorded(merged, 4)));
  std::string other_batch(kStep);
  other_batch.replace(other_batch.find("value=64"), 8, "value=32");
  EXPECT_FALSE(run(recorded(other_batch, 3)));
}

TEST_F(PlanCacheTest, AChainFoldedPastAnInnerProductStillReadTiesTheResultToBothScalars) {
  // kChain folds into x * 8 while x * 2 stays an output: a new inner scalar must miss.
  std::string kept(kChain);
  kept.replace(kept.find("return %n"), 9, "return %n, %m");
  EXPECT_FALSE(run(recorded(kept, 1)));
  EXPECT_TRUE(run(recorded(kept, 2)));
  kept.replace(kept.find("value=2"), 7, "value=3");
  EXPECT_FALSE(run(recorded(kept, 3)));  // run() checks x * 12, not the remembered x * 8
}

TEST_F(PlanCacheTest, WhichLeavesAreEqualIsPartOfTheKey) {
  // Two additions of the same data leaf merge into one; of two leaves they must not.
  constexpr std::string_view kTwice = R"(
    %x = data() : f32[4]
    %y = data() : f32[4]
    %a = exp(%x) : f32[4]
    %b = exp(%y) : f32[4]
    %s = add(%a, %b) : f32[4]
    return %s
  )";
  ir::Graph shared = recorded(kTwice);
  shared.nodes[1]->buffer = shared.nodes[0]->buffer;
  EXPECT_FALSE(run(shared));
  EXPECT_FALSE(run(recorded(kTwice, 2)));
  EXPECT_TRUE(run(recorded(kTwice, 3)));

  // Equal constants and equal ranges merge too: ones equal at first and different later must
  // miss.
  constexpr std::string_view kTwoScales = R"(
    %x = data() : f32[4]
    %a = SCALE : f32[4]
    %b = SCALE : f32[4]
    %m = mul(%x, %a) : f32[4]
    %n = mul(%x, %b) : f32[4]
    %s = sub(%m, %n) : f32[4]
    return %s
  )";
  const std::pair<std::string_view, std::string_view> kEqualThenDifferent[] = {
      {"full() {value=3}", "full() {value=5}"},
      {"arange() {start=0, step=2}", "arange() {start=0, step=3}"}};
  for (const auto& [equal, different] : kEqualThenDifferent) {
    std::string text(kTwoScales);
    text.replace(text.find("SCALE"), 5, equal);
    text.replace(text.find("SCALE"), 5, equal);
    EXPECT_FALSE(run(recorded(text))) << equal;
    text.replace(text.rfind(equal), equal.size(), different);
    EXPECT_FALSE(run(recorded(text))) << different;
  }
}

TEST_F(PlanCacheTest, SeedsAndSliceStartsAreValues) {
  constexpr std::string_view kWindow = R"(
    %x = data() : f32[16]
    %w = slice(%x) {starts=[2], steps=[1]} : f32[4]
    %r = random_uniform() {seed=5, low=0, high=1} : f32[4]
    %y = add(%w, %r) : f32[4]
    return %y
  )";
  EXPECT_FALSE(run(recorded(kWindow)));
  std::string moved(kWindow);
  moved.replace(moved.find("starts=[2]"), 10, "starts=[9]");
  moved.replace(moved.find("seed=5"), 6, "seed=6");
  EXPECT_TRUE(run(recorded(moved)));
}

TEST_F(PlanCacheTest, TheCacheHoldsNoBuffer) {
  ir::Graph graph = recorded(kAffine);
  const std::weak_ptr<memory::Buffer> data = graph.nodes[0]->buffer;
  EXPECT_FALSE(run(graph));
  graph = ir::Graph{};
  EXPECT_TRUE(data.expired());
}

// A loop's hits copy the remembered result once: the copy given back after it ran is rebound
// to the next recording, holding no buffer meanwhile.
TEST_F(PlanCacheTest, AHitsGraphGivenBackIsReboundByTheNextHit) {
  EXPECT_FALSE(run(recorded(kAffine, 1)));
  const auto hit = [&](const ir::Graph& graph) {
    PlanCache::Lookup lookup = cache_.look_up(graph, ir::Wiring::of(graph), kPipeline, {});
    EXPECT_TRUE(lookup.hit());
    PlanCache::Origin origin = PlanCache::origin_of(lookup);
    PassContext context = cache_.complete(std::move(lookup), run_passes);
    expect_interpreters_results(graph, context);
    return std::pair(std::move(origin), std::move(context));
  };

  const ir::Graph second = recorded(kAffine, 2);
  auto [origin, context] = hit(second);
  const std::weak_ptr<ir::Node> copied = context.graph.nodes.back();
  EXPECT_EQ(second.nodes[0]->buffer.use_count(), 2) << "the recording's and the copy's";
  cache_.give_back(std::move(origin), std::move(context));
  EXPECT_EQ(second.nodes[0]->buffer.use_count(), 1) << "a copy given back holds no buffer";

  std::string other(kAffine);
  other.replace(other.find("value=3"), 7, "value=7");
  const ir::Graph third = recorded(other, 3);
  auto [third_origin, third_context] = hit(third);
  EXPECT_EQ(third_context.graph.nodes.back(), copied.lock()) << "the copy given back, rebound";

  // A copy whose node something else still holds (a queued collective) is not reused.
  const ir::NodePtr held = third_context.graph.nodes.back();
  cache_.give_back(std::move(third_origin), std::move(third_context));
  auto [fourth_origin, fourth_context] = hit(recorded(kAffine, 4));
  EXPECT_NE(fourth_context.graph.nodes.back().get(), held.get());

  // Nor is one whose structure the cache has forgotten meanwhile.
  cache_.clear();
  cache_.give_back(std::move(fourth_origin), std::move(fourth_context));
  EXPECT_FALSE(run(recorded(kAffine, 5)));
}

TEST_F(PlanCacheTest, TheNodesRememberedAreBounded) {
  // kAffine optimizes to 5 nodes (x, 3, 0.5, mul, add): two such results fit in 12 nodes.
  PlanCache small(256, 12);
  const auto hits = [&](const std::string& text) { return prepare(small, recorded(text)).hit; };
  std::string nine(kAffine), ten(kAffine);
  for (size_t at; (at = nine.find("[8]")) != std::string::npos;) nine.replace(at, 3, "[9]");
  for (size_t at; (at = ten.find("[8]")) != std::string::npos;) ten.replace(at, 3, "[10]");
  EXPECT_FALSE(hits(std::string(kAffine)));
  EXPECT_FALSE(hits(nine));
  EXPECT_EQ(small.nodes(), 10u);
  EXPECT_FALSE(hits(ten));
  EXPECT_EQ(small.size(), 2u) << "the oldest went";
  EXPECT_LE(small.nodes(), 12u);
  EXPECT_FALSE(hits(std::string(kAffine)));

  PlanCache tiny(256, 4);
  EXPECT_FALSE(prepare(tiny, recorded(kAffine)).hit);
  EXPECT_EQ(tiny.size(), 0u) << "a result larger than the whole capacity is not remembered";
}

TEST_F(PlanCacheTest, TheOldestStructureGoesFirst) {
  PlanCache small(2);
  const auto hits = [&](std::string_view text) { return prepare(small, recorded(text)).hit; };
  const auto sized = [](std::string_view size) {
    std::string text(kAffine);
    for (size_t at; (at = text.find("[8]")) != std::string::npos;) text.replace(at, 3, size);
    return text;
  };
  const std::string nine = sized("[9]"), ten = sized("[10]");
  EXPECT_FALSE(hits(kAffine));
  EXPECT_FALSE(hits(nine));
  EXPECT_FALSE(hits(ten));
  EXPECT_EQ(small.size(), 2u);
  EXPECT_TRUE(hits(ten));
  EXPECT_TRUE(hits(nine));
  EXPECT_FALSE(hits(kAffine));
}

}  // namespace
}  // namespace lz::passes
