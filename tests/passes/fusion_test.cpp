// The "fuse" pass: kernel counts for each fusion rule, the reasons given where fusion stops, and
// the invariants every plan must keep (checked independently of the pass for every test).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "passes/pass.h"
#include "plan/fusion_plan.h"

namespace lz::passes {
namespace {

using ir::Graph;
using ir::Node;
using ir::NodePtr;
using ir::Op;

bool is_leaf(const Node& node) { return node.op == Op::Data || node.is_evaluated(); }

// Checks what every plan must satisfy, from the graph's edges alone:
// - each non-data node is in exactly one kernel, data leaves in none, kernel nodes in graph order;
// - a kernel's inputs are exactly the values its nodes read from outside, each a data leaf or an
//   output of an earlier kernel (so the kernel order respects dependencies);
// - a kernel's outputs are exactly its nodes read by other kernels or asked for by the graph;
// - every graph output is a data leaf or some kernel's output;
// - the refusals are exactly the producer -> consumer edges crossing kernels, each with a reason;
// - kernels stay within the bounds (a single node over the input bound cannot be split).
void expect_valid_plan(const Graph& graph, const plan::FusionPlan& plan,
                       const PassOptions& options) {
  const auto positions = graph.index();
  const auto position = [&](const NodePtr& node) {
    const auto found = positions.find(node.get());
    EXPECT_NE(found, positions.end()) << "a plan names a node outside the graph";
    return found == positions.end() ? int64_t{-1} : found->second;
  };
  std::vector<int> kernel_of(graph.nodes.size(), -1);
  for (size_t k = 0; k < plan.kernels.size(); ++k) {
    const plan::Kernel& kernel = plan.kernels[k];
    EXPECT_EQ(kernel.id, static_cast<int>(k));
    EXPECT_FALSE(kernel.nodes.empty()) << "kernel " << k << " is empty";
    int64_t previous = -1;
    for (const NodePtr& node : kernel.nodes) {
      const int64_t at = position(node);
      if (at < 0) continue;
      EXPECT_FALSE(is_leaf(*node)) << "data leaf %" << at << " is in kernel " << k;
      EXPECT_EQ(kernel_of[at], -1)
          << "%" << at << " is in kernels " << kernel_of[at] << " and " << k;
      EXPECT_GT(at, previous) << "kernel " << k << " lists %" << at << " out of graph order";
      kernel_of[at] = static_cast<int>(k);
      previous = at;
    }
  }
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (!is_leaf(*graph.nodes[i])) {
      EXPECT_GE(kernel_of[i], 0) << "%" << i << " is in no kernel";
    }
  }

  std::set<int64_t> graph_outputs;
  for (const NodePtr& output : graph.outputs) graph_outputs.insert(position(output));

  std::set<std::pair<int64_t, int64_t>> crossing;
  std::vector<std::set<int64_t>> expected_inputs(plan.kernels.size());
  std::vector<std::set<int64_t>> expected_outputs(plan.kernels.size());
  for (size_t c = 0; c < graph.nodes.size(); ++c) {
    if (kernel_of[c] < 0) continue;
    if (graph_outputs.count(static_cast<int64_t>(c))) expected_outputs[kernel_of[c]].insert(c);
    for (const NodePtr& input : graph.nodes[c]->inputs) {
      const int64_t p = position(input);
      if (p < 0 || kernel_of[p] == kernel_of[c]) continue;
      expected_inputs[kernel_of[c]].insert(p);
      if (kernel_of[p] < 0) continue;
      EXPECT_LT(kernel_of[p], kernel_of[c]) << "kernel " << kernel_of[c] << " reads %" << p
                                            << " from the later kernel " << kernel_of[p];
      crossing.insert({p, static_cast<int64_t>(c)});
      expected_outputs[kernel_of[p]].insert(p);
    }
  }
  for (size_t k = 0; k < plan.kernels.size(); ++k) {
    const plan::Kernel& kernel = plan.kernels[k];
    std::set<int64_t> inputs;
    for (const NodePtr& input : kernel.inputs) {
      EXPECT_TRUE(inputs.insert(position(input)).second) << "kernel " << k << " repeats an input";
    }
    EXPECT_EQ(inputs, expected_inputs[k]) << "inputs of kernel " << k;
    std::set<int64_t> outputs;
    for (const NodePtr& output : kernel.outputs) {
      EXPECT_TRUE(outputs.insert(position(output)).second)
          << "kernel " << k << " repeats an output";
    }
    EXPECT_EQ(outputs, expected_outputs[k]) << "outputs of kernel " << k;
    if (kernel.epilogue >= 0) {
      // It runs at the matmul's place: it reads the product, and everything else it reads is
      // computed before.
      EXPECT_TRUE(plan::is_matmul_kernel(kernel)) << "kernel " << k << " has an epilogue";
      ASSERT_GT(kernel.epilogue, static_cast<int>(k));
      ASSERT_LT(kernel.epilogue, static_cast<int>(plan.kernels.size()));
      const int64_t product = position(kernel.nodes.back());
      EXPECT_TRUE(expected_inputs[kernel.epilogue].count(product))
          << "kernel " << kernel.epilogue << ", the epilogue of kernel " << k
          << ", does not read its product";
      for (const int64_t input : expected_inputs[kernel.epilogue]) {
        EXPECT_TRUE(input == product || kernel_of[input] < static_cast<int>(k))
            << "the epilogue of kernel " << k << " reads %" << input << " from kernel "
            << kernel_of[input];
      }
    }
    EXPECT_LE(kernel.nodes.size(), static_cast<size_t>(options.max_kernel_ops));
    if (kernel.nodes.size() > 1) {
      EXPECT_LE(kernel.inputs.size(), static_cast<size_t>(options.max_kernel_inputs));
    }
  }
  for (const NodePtr& output : graph.outputs) {
    const int64_t p = position(output);
    if (p >= 0 && !is_leaf(*output)) {
      EXPECT_TRUE(expected_outputs[kernel_of[p]].count(p)) << "graph output %" << p;
    }
  }

  std::set<std::pair<int64_t, int64_t>> refused;
  for (const plan::FusionRefusal& refusal : plan.refusals) {
    const std::pair edge{position(refusal.producer), position(refusal.consumer)};
    EXPECT_TRUE(refused.insert(edge).second)
        << "edge %" << edge.first << " -> %" << edge.second << " is refused twice";
    EXPECT_FALSE(refusal.reason.empty());
  }
  EXPECT_EQ(refused, crossing) << "every edge between kernels needs exactly one refusal";
}

plan::FusionPlan fuse(const Graph& graph, const PassOptions& options = {}) {
  PassContext context(graph, options);
  make_pass("fuse")->run(context);
  EXPECT_NE(context.fusion, nullptr);
  if (context.fusion == nullptr) return {};
  expect_valid_plan(context.graph, *context.fusion, options);
  return std::move(*context.fusion);
}

Graph parse(std::string_view text) { return ir::parse_graph(text).graph; }

// Graph positions of some nodes, to compare with hand-written expectations.
std::vector<int64_t> positions_of(const Graph& graph, const std::vector<NodePtr>& nodes) {
  const auto positions = graph.index();
  std::vector<int64_t> result;
  for (const NodePtr& node : nodes) result.push_back(positions.at(node.get()));
  return result;
}

// The reason given for the edge %producer -> %consumer, or "" if it was not refused.
std::string reason_for(const Graph& graph, const plan::FusionPlan& plan, int64_t producer,
                       int64_t consumer) {
  for (const plan::FusionRefusal& refusal : plan.refusals) {
    if (refusal.producer == graph.nodes[producer] && refusal.consumer == graph.nodes[consumer]) {
      return refusal.reason;
    }
  }
  return "";
}

constexpr std::string_view kSoftmax = R"(
  %x = data() : f32[8,16]
  %max = max(%x) {axes=[1], keepdims=true} : f32[8,1]
  %shifted = sub(%x, %max) : f32[8,16]
  %e = exp(%shifted) : f32[8,16]
  %total = sum(%e) {axes=[1], keepdims=true} : f32[8,1]
  %y = div(%e, %total) : f32[8,16]
  return %y
)";

TEST(FusionTest, PassIsNamedFuse) { EXPECT_EQ(make_fusion()->name(), "fuse"); }

TEST(FusionTest, ChainOfSevenElementwiseOpsIsOneKernel) {
  const Graph graph = parse(R"(
    %a = data() : f32[3,4]
    %b = data() : f32[3,4]
    %1 = add(%a, %b) : f32[3,4]
    %2 = mul(%1, %b) : f32[3,4]
    %3 = exp(%2) : f32[3,4]
    %4 = neg(%3) : f32[3,4]
    %5 = sub(%4, %a) : f32[3,4]
    %6 = relu(%5) : f32[3,4]
    %7 = tanh(%6) : f32[3,4]
    return %7
  )");
  const plan::FusionPlan plan = fuse(graph);
  ASSERT_EQ(plan.kernels.size(), 1u);
  EXPECT_EQ(plan.kernels[0].nodes.size(), 7u);
  EXPECT_EQ(positions_of(graph, plan.kernels[0].inputs), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(positions_of(graph, plan.kernels[0].outputs), (std::vector<int64_t>{8}));
  EXPECT_TRUE(plan.refusals.empty());
}

TEST(FusionTest, BroadcastingChainWithConstantsIsOneKernel) {
  const Graph graph = parse(R"(
    %a = data() : f32[3,4]
    %b = data() : f32[4]
    %two = full() {value=2} : f32[]
    %1 = add(%a, %b) : f32[3,4]
    %2 = mul(%1, %two) : f32[3,4]
    %3 = broadcast_to(%b) : f32[3,4]
    %4 = sub(%2, %3) : f32[3,4]
    %5 = transpose(%4) {perm=[1,0]} : f32[4,3]
    %6 = exp(%5) : f32[4,3]
    %7 = reshape(%6) : f32[12]
    %8 = sqrt(%7) : f32[12]
    return %8
  )");
  const plan::FusionPlan plan = fuse(graph);
  ASSERT_EQ(plan.kernels.size(), 1u);
  // The 0-d full is a parameter inside the kernel, not an input.
  EXPECT_EQ(positions_of(graph, plan.kernels[0].inputs), (std::vector<int64_t>{0, 1}));
}

TEST(FusionTest, SumOfElementwiseExpressionIsOneKernel) {
  const Graph graph = parse(R"(
    %a = data() : f32[3,4]
    %b = data() : f32[3,4]
    %c = data() : f32[4]
    %ab = mul(%a, %b) : f32[3,4]
    %abc = add(%ab, %c) : f32[3,4]
    %total = sum(%abc) {axes=[0,1], keepdims=false} : f32[]
    return %total
  )");
  const plan::FusionPlan plan = fuse(graph);
  ASSERT_EQ(plan.kernels.size(), 1u);
  EXPECT_EQ(positions_of(graph, plan.kernels[0].outputs), (std::vector<int64_t>{5}));
}

TEST(FusionTest, MeanIsOneKernelWithItsDivideAsEpilogue) {
  const Graph graph = parse(R"(
    %x = data() : f32[8,16]
    %n = full() {value=16} : f32[]
    %total = sum(%x) {axes=[1], keepdims=false} : f32[8]
    %mean = div(%total, %n) : f32[8]
    return %mean
  )");
  const plan::FusionPlan plan = fuse(graph);
  ASSERT_EQ(plan.kernels.size(), 1u);
  EXPECT_EQ(positions_of(graph, plan.kernels[0].outputs), (std::vector<int64_t>{3}));
}

TEST(FusionTest, SoftmaxOverLastAxisIsOneKernelInTwoStages) {
  const Graph graph = parse(kSoftmax);
  const plan::FusionPlan plan = fuse(graph);
  ASSERT_EQ(plan.kernels.size(), 1u);
  EXPECT_EQ(positions_of(graph, plan.kernels[0].nodes), (std::vector<int64_t>{1, 2, 3, 4, 5}));
  // Only the input is read and only the result written: not even the row maxima cross.
  EXPECT_EQ(positions_of(graph, plan.kernels[0].inputs), (std::vector<int64_t>{0}));
  EXPECT_EQ(positions_of(graph, plan.kernels[0].outputs), (std::vector<int64_t>{5}));
  EXPECT_TRUE(plan.refusals.empty());
}

TEST(FusionTest, SoftmaxWithoutKeepdimsIsOneKernel) {
  const Graph graph = parse(R"(
    %x = data() : f32[8,16]
    %max = max(%x) {axes=[1], keepdims=false} : f32[8]
    %max_column = reshape(%max) : f32[8,1]
    %max_wide = broadcast_to(%max_column) : f32[8,16]
    %shifted = sub(%x, %max_wide) : f32[8,16]
    %e = exp(%shifted) : f32[8,16]
    %total = sum(%e) {axes=[1], keepdims=false} : f32[8]
    %total_column = reshape(%total) : f32[8,1]
    %y = div(%e, %total_column) : f32[8,16]
    return %y
  )");
  const plan::FusionPlan plan = fuse(graph);
  EXPECT_EQ(plan.kernels.size(), 1u);
}

TEST(FusionTest, ReductionsToOneValueDoNotChain) {
  const Graph graph = parse(R"(
    %x = data() : f32[1,64]
    %max = max(%x) {axes=[1], keepdims=true} : f32[1,1]
    %shifted = sub(%x, %max) : f32[1,64]
    %e = exp(%shifted) : f32[1,64]
    %total = sum(%e) {axes=[1], keepdims=true} : f32[1,1]
    %y = div(%e, %total) : f32[1,64]
    return %y
  )");
  const plan::FusionPlan plan = fuse(graph);
  ASSERT_EQ(plan.kernels.size(), 2u);
  EXPECT_EQ(positions_of(graph, plan.kernels[0].nodes), (std::vector<int64_t>{1}));
  EXPECT_EQ(reason_for(graph, plan, 1, 2),
            "consumer feeds another reduction of its kernel; reductions to one value do not "
            "chain in a kernel");
}

TEST(FusionTest, CenteringByTheMeanDoesNotMaterializeTheBroadcast) {
  const Graph graph = parse(R"(
    %x = data() : f32[8,16]
    %n = full() {value=16} : f32[]
    %total = sum(%x) {axes=[1], keepdims=true} : f32[8,1]
    %mean = div(%total, %n) : f32[8,1]
    %centred = sub(%x, %mean) : f32[8,16]
    return %centred
  )");
  const plan::FusionPlan plan = fuse(graph);
  ASSERT_EQ(plan.kernels.size(), 1u);
  EXPECT_EQ(positions_of(graph, plan.kernels[0].outputs), (std::vector<int64_t>{4}));
}

TEST(FusionTest, LayerNormIsOneKernelWritingOnlyItsResult) {
  const Graph graph = parse(R"(
    %x = data() : f32[8,16]
    %gamma = data() : f32[16]
    %beta = data() : f32[16]
    %n = full() {value=16} : f32[]
    %eps = full() {value=1e-05} : f32[]
    %total = sum(%x) {axes=[1], keepdims=true} : f32[8,1]
    %mean = div(%total, %n) : f32[8,1]
    %centred = sub(%x, %mean) : f32[8,16]
    %squared = mul(%centred, %centred) : f32[8,16]
    %squares = sum(%squared) {axes=[1], keepdims=true} : f32[8,1]
    %variance = div(%squares, %n) : f32[8,1]
    %shifted = add(%variance, %eps) : f32[8,1]
    %scale = rsqrt(%shifted) : f32[8,1]
    %normed = mul(%centred, %scale) : f32[8,16]
    %scaled = mul(%normed, %gamma) : f32[8,16]
    %y = add(%scaled, %beta) : f32[8,16]
    return %y
  )");
  const plan::FusionPlan plan = fuse(graph);
  ASSERT_EQ(plan.kernels.size(), 1u);
  EXPECT_EQ(positions_of(graph, plan.kernels[0].outputs), (std::vector<int64_t>{15}));
  EXPECT_TRUE(plan.refusals.empty());
}

TEST(FusionTest, MatmulIsAloneAndItsBiasAndReluAreOneKernel) {
  const Graph graph = parse(R"(
    %x = data() : f32[4,8]
    %w = data() : f32[8,16]
    %bias = data() : f32[16]
    %product = matmul(%x, %w) : f32[4,16]
    %biased = add(%product, %bias) : f32[4,16]
    %y = relu(%biased) : f32[4,16]
    return %y
  )");
  const plan::FusionPlan plan = fuse(graph);
  ASSERT_EQ(plan.kernels.size(), 2u);
  EXPECT_EQ(positions_of(graph, plan.kernels[0].nodes), (std::vector<int64_t>{3}));
  EXPECT_EQ(positions_of(graph, plan.kernels[1].nodes), (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(reason_for(graph, plan, 3, 4), "producer is a matmul, which runs as its own kernel");
}

TEST(FusionTest, ElementwiseProducerOfMatmulIsNotFusedIntoIt) {
  const Graph graph = parse(R"(
    %x = data() : f32[4,8]
    %w = data() : f32[8,16]
    %activated = tanh(%x) : f32[4,8]
    %product = matmul(%activated, %w) : f32[4,16]
    return %product
  )");
  const plan::FusionPlan plan = fuse(graph);
  ASSERT_EQ(plan.kernels.size(), 2u);
  EXPECT_EQ(reason_for(graph, plan, 2, 3), "consumer is a matmul, which runs as its own kernel");
}

// A gradient's h^T @ g: the transpose joins the matmul, which reads h in place, transposed.
TEST(FusionTest, MatmulReadsATransposeOfItsLastTwoAxesThatOnlyItReads) {
  const Graph graph = parse(R"(
    %h = data() : f32[2,4,8]
    %g = data() : f32[2,4,16]
    %ht = transpose(%h) {perm=[0,2,1]} : f32[2,8,4]
    %product = matmul(%ht, %g) : f32[2,8,16]
    return %product
  )");
  const plan::FusionPlan plan = fuse(graph);
  ASSERT_EQ(plan.kernels.size(), 1u);
  EXPECT_EQ(positions_of(graph, plan.kernels[0].nodes), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(positions_of(graph, plan.kernels[0].inputs), (std::vector<int64_t>{0, 1}));
  ASSERT_TRUE(plan::is_matmul_kernel(plan.kernels[0]));
  EXPECT_EQ(plan.kernels[0].inputs[plan::matmul_operand(plan.kernels[0], 0).input], graph.nodes[0]);
  EXPECT_TRUE(plan::matmul_operand(plan.kernels[0], 0).transposed);
  EXPECT_EQ(plan.kernels[0].inputs[plan::matmul_operand(plan.kernels[0], 1).input], graph.nodes[1]);
  EXPECT_FALSE(plan::matmul_operand(plan.kernels[0], 1).transposed);
}

// A transpose the matmul cannot read in place is written out by a kernel of its own: one that
// moves a batch axis, one read by another kernel too, one asked for, one of a computed value.
TEST(FusionTest, OtherTransposesOfMatmulOperandsAreKernelsOfTheirOwn) {
  const Graph graph = parse(R"(
    %a = data() : f32[2,4,8]
    %b = data() : f32[4,2,8]
    %c = data() : f32[8,4]
    %moved = transpose(%a) {perm=[1,0,2]} : f32[4,2,8]
    %first = matmul(%moved, %c) : f32[4,2,4]
    %shared = transpose(%c) {perm=[1,0]} : f32[4,8]
    %second = matmul(%c, %shared) : f32[8,8]
    %doubled = add(%shared, %shared) : f32[4,8]
    %kept = transpose(%c) {perm=[1,0]} : f32[4,8]
    %third = matmul(%c, %kept) : f32[8,8]
    %computed = exp(%b) : f32[4,2,8]
    %flipped = transpose(%computed) {perm=[0,2,1]} : f32[4,8,2]
    %fourth = matmul(%flipped, %b) : f32[4,8,8]
    return %first, %second, %doubled, %kept, %third, %fourth
  )");
  const plan::FusionPlan plan = fuse(graph);
  EXPECT_EQ(reason_for(graph, plan, 3, 4), "consumer is a matmul, which runs as its own kernel");
  EXPECT_EQ(reason_for(graph, plan, 5, 6), "consumer is a matmul, which runs as its own kernel");
  EXPECT_EQ(reason_for(graph, plan, 8, 9), "consumer is a matmul, which runs as its own kernel");
  // The transpose joins; the exp under it reads from memory as every matmul operand does.
  EXPECT_EQ(reason_for(graph, plan, 10, 11),
            "consumer is a matmul's transposed operand, which it reads from memory");
  for (const plan::Kernel& kernel : plan.kernels) {
    if (kernel.nodes.back()->op == Op::MatMul) {
      EXPECT_TRUE(plan::is_matmul_kernel(kernel)) << "kernel " << kernel.id;
    }
  }
}

// The kernel after a matmul that computes from the product element for element is its epilogue,
// with whatever it reads besides computed before the matmul: a bias and an activation, a cast,
// a residual add, a second output.
TEST(FusionTest, ElementwiseKernelReadingAProductIsItsEpilogue) {
  const Graph graph = parse(R"(
    %x = data() : f32[64,32]
    %w = data() : f32[32,16]
    %b = data() : f32[16]
    %r = data() : f32[64,16]
    %product = matmul(%x, %w) : f32[64,16]
    %biased = add(%product, %b) : f32[64,16]
    %active = relu(%biased) : f32[64,16]
    %residual = add(%active, %r) : f32[64,16]
    %wide = astype(%residual) : f64[64,16]
    return %wide, %active
  )");
  const plan::FusionPlan plan = fuse(graph);
  ASSERT_EQ(plan.kernels.size(), 2u);
  EXPECT_EQ(plan.kernels[0].epilogue, 1);
  EXPECT_EQ(plan.kernels[1].epilogue, -1);
  EXPECT_NE(plan::print_fusion_plan(plan, graph).find("# epilogue: kernel 1"), std::string::npos);
}

// Readers of a product that are no epilogue: one that moves the product's elements, one of
// another shape, one reducing over another axis than the last. A reader that needs a value
// computed before the matmul is one (%late's bias is the row sums of %reduced, computed by that
// one's epilogue); one needing a value computed after it is not (%both, for %first).
TEST(FusionTest, KernelsNotByRowsOfTheProductAreNoEpilogue) {
  const Graph graph = parse(R"(
    %x = data() : f32[8,8]
    %moved = matmul(%x, %x) : f32[8,8]
    %flipped = transpose(%moved) {perm=[1,0]} : f32[8,8]
    %one = exp(%flipped) : f32[8,8]
    %reduced = matmul(%x, %x) : f32[8,8]
    %sum = sum(%reduced) {axes=[1], keepdims=false} : f32[8]
    %grown = matmul(%x, %x) : f32[8,8]
    %wide = broadcast_to(%grown) : f32[2,8,8]
    %two = exp(%wide) : f32[2,8,8]
    %late = matmul(%x, %x) : f32[8,8]
    %biased = add(%late, %sum) : f32[8,8]
    %columns = matmul(%x, %x) : f32[8,8]
    %column_sum = sum(%columns) {axes=[0], keepdims=false} : f32[8]
    %first = matmul(%x, %x) : f32[8,8]
    %second = matmul(%x, %x) : f32[8,8]
    %both = add(%first, %second) : f32[8,8]
    return %one, %two, %biased, %column_sum, %both
  )");
  const plan::FusionPlan plan = fuse(graph);
  for (const plan::Kernel& kernel : plan.kernels) {
    if (!plan::is_matmul_kernel(kernel)) continue;
    const int64_t product = positions_of(graph, {kernel.nodes.back()})[0];
    // %both waits for %second: the epilogue of that one only.
    EXPECT_EQ(kernel.epilogue >= 0, product == 4 || product == 9 || product == 14)
        << "matmul %" << product;
  }
}

// Reductions over the product's rows make an epilogue too: a softmax after a layer (max and sum
// over the last axis, the broadcasts back over it) and a row's argmax, the outputs a value per
// element or per row.
TEST(FusionTest, ReductionsOverTheProductsRowsAreAnEpilogue) {
  const Graph graph = parse(R"(
    %x = data() : f32[2,64,32]
    %w = data() : f32[32,16]
    %b = data() : f32[16]
    %product = matmul(%x, %w) : f32[2,64,16]
    %logits = add(%product, %b) : f32[2,64,16]
    %max = max(%logits) {axes=[2], keepdims=true} : f32[2,64,1]
    %shifted = sub(%logits, %max) : f32[2,64,16]
    %e = exp(%shifted) : f32[2,64,16]
    %total = sum(%e) {axes=[2], keepdims=true} : f32[2,64,1]
    %softmax = div(%e, %total) : f32[2,64,16]
    %best = argmax(%logits) {axes=[2], keepdims=false} : i64[2,64]
    return %softmax, %best
  )");
  const plan::FusionPlan plan = fuse(graph);
  ASSERT_TRUE(plan::is_matmul_kernel(plan.kernels[0]));
  EXPECT_EQ(plan.kernels[0].epilogue, 1);
}

// An integer product is the interpreter's, not BLAS's: no epilogue runs on its rows.
TEST(FusionTest, IntegerMatmulHasNoEpilogue) {
  const Graph graph = parse(R"(
    %x = data() : i32[8,8]
    %product = matmul(%x, %x) : i32[8,8]
    %twice = add(%product, %product) : i32[8,8]
    return %twice
  )");
  const plan::FusionPlan plan = fuse(graph);
  ASSERT_EQ(plan.kernels.size(), 2u);
  EXPECT_EQ(plan.kernels[0].epilogue, -1);
}

TEST(FusionTest, UserHeldIntermediateIsWrittenOutByItsKernelAndComputedOnce) {
  const Graph graph = parse(R"(
    %a = data() : f32[3,4]
    %1 = exp(%a) : f32[3,4]
    %2 = neg(%1) : f32[3,4]
    %held = mul(%2, %a) : f32[3,4]
    %4 = sin(%held) : f32[3,4]
    %5 = cos(%4) : f32[3,4]
    return %5, %held
  )");
  const plan::FusionPlan plan = fuse(graph);
  ASSERT_EQ(plan.kernels.size(), 1u);
  EXPECT_EQ(plan.kernels[0].nodes.size(), 5u);
  EXPECT_EQ(positions_of(graph, plan.kernels[0].outputs), (std::vector<int64_t>{3, 5}));
}

TEST(FusionTest, ReductionsOverDifferentAxesOfOneInputAreSeparateKernels) {
  // Either order: below the first-level cache a column sum's kernel may also take the product.
  const std::string rows = "%rows = sum(%x) {axes=[1], keepdims=false} : f32[3]\n";
  const std::string columns = "%columns = sum(%x) {axes=[0], keepdims=false} : f32[4]\n";
  for (const bool rows_first : {true, false}) {
    SCOPED_TRACE(rows_first ? "rows first" : "columns first");
    const Graph graph =
        parse("%a = data() : f32[3,4]\n%b = data() : f32[3,4]\n%x = mul(%a, %b) : f32[3,4]\n" +
              (rows_first ? rows + columns : columns + rows) + "return %rows, %columns\n");
    const plan::FusionPlan plan = fuse(graph);
    ASSERT_EQ(plan.kernels.size(), 2u);
    // The shared product is computed once, in the first kernel, and written out for the second.
    EXPECT_EQ(positions_of(graph, plan.kernels[0].nodes), (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(positions_of(graph, plan.kernels[0].outputs), (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(reason_for(graph, plan, 2, 4), "consumer is a reduction over a different axis");
  }
}

// A gradient's relu mask feeds the next layer's matmul and its column sums (the bias's
// gradient): the sum's loop runs down each column, so writing the mask there would store it a
// strided element at a time, each to a line out of cache once the input outgrows the first-level
// cache. The mask then gets a kernel of its own; what is not written out still joins (the
// product inside the other sum). A small input keeps it fused.
std::string masked_column_sums(int64_t rows, int64_t columns) {
  const std::string matrix = "[" + std::to_string(rows) + "," + std::to_string(columns) + "]";
  const std::string row = "[" + std::to_string(columns) + "]";
  return "%h = data() : f32" + matrix + "\n%g = data() : f32" + matrix + "\n%w = data() : f32[" +
         std::to_string(columns) + ",4]\n" +
         "%zero = full() {value=0} : f32[]\n%positive = greater(%h, %zero) : bool" + matrix +
         "\n%mask = where(%positive, %g, %zero) : f32" + matrix +
         "\n%bias = sum(%mask) {axes=[0], keepdims=false} : f32" + row +
         "\n%below = matmul(%mask, %w) : f32[" + std::to_string(rows) + ",4]\n" +
         "%scaled = mul(%g, %h) : f32" + matrix +
         "\n%other = sum(%scaled) {axes=[0], keepdims=false} : f32" + row +
         "\nreturn %below, %bias, %other\n";
}

std::vector<std::vector<int64_t>> kernel_positions(const Graph& graph,
                                                   const plan::FusionPlan& plan) {
  std::vector<std::vector<int64_t>> kernels;
  for (const plan::Kernel& kernel : plan.kernels)
    kernels.push_back(positions_of(graph, kernel.nodes));
  return kernels;
}

TEST(FusionTest, AReductionOverLeadingAxesWritesNoProducerOutBeyondTheCache) {
  const Graph large = parse(masked_column_sums(256, 64));  // 16,384 elements
  const plan::FusionPlan apart = fuse(large);
  EXPECT_EQ(reason_for(large, apart, 5, 6),
            "producer is written out, and its consumer's reduction over leading axes would write "
            "it column by column");
  EXPECT_EQ(kernel_positions(large, apart),
            (std::vector<std::vector<int64_t>>{{3, 4, 5}, {6}, {7}, {8, 9}}));

  const Graph small = parse(masked_column_sums(8, 16));
  EXPECT_EQ(kernel_positions(small, fuse(small)),
            (std::vector<std::vector<int64_t>>{{3, 4, 5, 6}, {7}, {8, 9}}));
}

TEST(FusionTest, AReductionOverLeadingAxesTakesNoBroadcastBackEpilogueBeyondTheCache) {
  // The updated bias of a gradient step, added to the next step's product: a broadcast-back
  // epilogue of the column sum, which its loops would write column by column.
  const Graph graph = parse(R"(
    %g = data() : f32[256,64]
    %b = data() : f32[64]
    %p = data() : f32[256,64]
    %total = sum(%g) {axes=[0], keepdims=false} : f32[64]
    %rate = full() {value=0.1} : f32[]
    %step = mul(%total, %rate) : f32[64]
    %updated = sub(%b, %step) : f32[64]
    %biased = add(%p, %updated) : f32[256,64]
    return %biased
  )");
  const plan::FusionPlan plan = fuse(graph);
  EXPECT_EQ(kernel_positions(graph, plan), (std::vector<std::vector<int64_t>>{{3}, {4, 5, 6, 7}}));
  EXPECT_NE(reason_for(graph, plan, 3, 5).find("would write it column by column"),
            std::string::npos)
      << reason_for(graph, plan, 3, 5);
}

TEST(FusionTest, ReductionsOverOtherAxesDoNotChain) {
  const Graph graph = parse(R"(
    %x = data() : f32[3,4]
    %rows = max(%x) {axes=[1], keepdims=true} : f32[3,1]
    %centred = sub(%x, %rows) : f32[3,4]
    %columns = sum(%centred) {axes=[0], keepdims=false} : f32[4]
    %row_total = sum(%rows) {axes=[0], keepdims=false} : f32[1]
    return %columns, %row_total
  )");
  const plan::FusionPlan plan = fuse(graph);
  EXPECT_EQ(plan.kernels.size(), 3u);
  EXPECT_EQ(reason_for(graph, plan, 1, 2), "consumer feeds a reduction over a different axis");
  EXPECT_NE(reason_for(graph, plan, 1, 4), "");
}

TEST(FusionTest, SideBySideReductionsOverTheSameAxesShareAKernel) {
  const Graph graph = parse(R"(
    %x = data() : f32[8,16]
    %n = full() {value=16} : f32[]
    %squared = square(%x) : f32[8,16]
    %squares = sum(%squared) {axes=[1], keepdims=false} : f32[8]
    %total = sum(%x) {axes=[1], keepdims=false} : f32[8]
    %mean_square = div(%squares, %n) : f32[8]
    %mean = div(%total, %n) : f32[8]
    %mean_squared = square(%mean) : f32[8]
    %variance = sub(%mean_square, %mean_squared) : f32[8]
    return %variance
  )");
  const plan::FusionPlan plan = fuse(graph);
  EXPECT_EQ(plan.kernels.size(), 1u);
}

TEST(FusionTest, TransposedReductionResultEndsTheKernelAtTheReduction) {
  const Graph graph = parse(R"(
    %x = data() : f32[2,3,4]
    %total = sum(%x) {axes=[2], keepdims=false} : f32[2,3]
    %flipped = transpose(%total) {perm=[1,0]} : f32[3,2]
    %y = exp(%flipped) : f32[3,2]
    return %y
  )");
  const plan::FusionPlan plan = fuse(graph);
  ASSERT_EQ(plan.kernels.size(), 2u);
  EXPECT_EQ(positions_of(graph, plan.kernels[0].nodes), (std::vector<int64_t>{1}));
  EXPECT_EQ(reason_for(graph, plan, 1, 2),
            "epilogue %2 (transpose) is neither shaped like the reduction's result nor its input "
            "broadcast back");
}

// The cotangents of chain7 ((a*b+c)*a-b)*0.5+c*c: three flat outputs sharing %half and %ga_b.
TEST(FusionTest, FlatSiblingsOfOneSizeMergeIntoOneKernel) {
  const Graph graph = parse(R"(
    %g = data() : f32[64]
    %a = data() : f32[64]
    %b = data() : f32[64]
    %c = data() : f32[64]
    %h = full() {value=0.5} : f32[]
    %half = mul(%g, %h) : f32[64]
    %ab = mul(%a, %b) : f32[64]
    %abc = add(%ab, %c) : f32[64]
    %ga_1 = mul(%half, %abc) : f32[64]
    %ga_b = mul(%half, %a) : f32[64]
    %ga_2 = mul(%ga_b, %b) : f32[64]
    %ga = add(%ga_1, %ga_2) : f32[64]
    %gb_1 = neg(%half) : f32[64]
    %gb_2 = mul(%ga_b, %a) : f32[64]
    %gb = add(%gb_1, %gb_2) : f32[64]
    %gc_1 = mul(%g, %c) : f32[64]
    %gc_2 = add(%gc_1, %gc_1) : f32[64]
    %gc = add(%gc_2, %ga_b) : f32[64]
    return %ga, %gb, %gc
  )");
  const plan::FusionPlan plan = fuse(graph);
  ASSERT_EQ(plan.kernels.size(), 1u);
  EXPECT_EQ(positions_of(graph, plan.kernels[0].inputs), (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(positions_of(graph, plan.kernels[0].outputs), (std::vector<int64_t>{11, 14, 17}));
  EXPECT_TRUE(plan.refusals.empty());

  // Under a bound of 8 ops, %ga's kernel (8 with %h) takes no sibling; %gb's and %gc's (3 each)
  // merge with each other.
  PassOptions bounded;
  bounded.max_kernel_ops = 8;
  const plan::FusionPlan split = fuse(graph, bounded);
  ASSERT_EQ(split.kernels.size(), 2u);
  EXPECT_EQ(positions_of(graph, split.kernels[1].nodes),
            (std::vector<int64_t>{12, 13, 14, 15, 16, 17}));
}

TEST(FusionTest, AFlatKernelMergesOnlyWhereWhatItReadsIsComputed) {
  const Graph graph = parse(R"(
    %x = data() : f32[4,4]
    %w = data() : f32[4,4]
    %e = exp(%x) : f32[4,4]
    %m = matmul(%x, %w) : f32[4,4]
    %y = add(%m, %x) : f32[4,4]
    %z = tanh(%x) : f32[4,4]
    %small = data() : f32[8]
    %s = exp(%small) : f32[8]
    return %e, %y, %z, %s
  )");
  // %y reads the matmul, which runs after %e's kernel: it stays a kernel of its own. %z reads
  // only data and joins %e's; %s has another size.
  const plan::FusionPlan plan = fuse(graph);
  ASSERT_EQ(plan.kernels.size(), 4u);
  EXPECT_EQ(positions_of(graph, plan.kernels[0].nodes), (std::vector<int64_t>{2, 5}));
  EXPECT_EQ(positions_of(graph, plan.kernels[0].outputs), (std::vector<int64_t>{2, 5}));
  EXPECT_EQ(positions_of(graph, plan.kernels[1].nodes), (std::vector<int64_t>{3}));
  EXPECT_EQ(positions_of(graph, plan.kernels[2].nodes), (std::vector<int64_t>{4}));
  EXPECT_EQ(positions_of(graph, plan.kernels[3].nodes), (std::vector<int64_t>{7}));
}

TEST(FusionTest, FusionOffGivesOneKernelPerOp) {
  const Graph graph = parse(kSoftmax);
  PassOptions options;
  options.fusion = false;
  const plan::FusionPlan plan = fuse(graph, options);
  EXPECT_EQ(plan.kernels.size(), 5u);
  ASSERT_FALSE(plan.refusals.empty());
  for (const plan::FusionRefusal& refusal : plan.refusals)
    EXPECT_EQ(refusal.reason, "fusion is off");
}

// A chain of `length` dependent adds of one data leaf, built directly (parsing would dominate).
Graph chain_of_adds(int length) {
  auto x = std::make_shared<Node>();
  x->shape = {4};
  std::vector<NodePtr> nodes{x};
  for (int i = 0; i < length; ++i) {
    auto add = std::make_shared<Node>();
    add->op = Op::Add;
    add->shape = {4};
    add->inputs = {nodes.back(), x};
    nodes.push_back(std::move(add));
  }
  Graph graph;
  graph.outputs = {nodes.back()};
  graph.nodes = std::move(nodes);
  return graph;
}

TEST(FusionTest, LongChainIsSplitIntoKernelsWithinTheOpBound) {
  const Graph graph = chain_of_adds(10000);
  const plan::FusionPlan plan = fuse(graph);
  EXPECT_EQ(plan.kernels.size(), (10000u + 63) / 64);
  for (const plan::Kernel& kernel : plan.kernels) EXPECT_LE(kernel.nodes.size(), 64u);
  ASSERT_FALSE(plan.refusals.empty());
  EXPECT_EQ(plan.refusals[0].reason, "kernel reached 64 ops");
}

TEST(FusionTest, HundredThousandNodesFuse) {
  const Graph graph = chain_of_adds(100000);
  PassOptions options;
  options.max_kernel_ops = 1000;
  const plan::FusionPlan plan = fuse(graph, options);
  EXPECT_EQ(plan.kernels.size(), 100u);
}

TEST(FusionTest, KernelReadingTooManyInputsIsSplit) {
  std::string text;
  for (int i = 0; i < 40; ++i) text += "%d" + std::to_string(i) + " = data() : f32[4]\n";
  text += "%s0 = add(%d0, %d1) : f32[4]\n";
  for (int i = 2; i < 40; ++i) {
    text += "%s" + std::to_string(i - 1) + " = add(%s" + std::to_string(i - 2) + ", %d" +
            std::to_string(i) + ") : f32[4]\n";
  }
  text += "return %s38\n";
  const Graph graph = parse(text);
  const plan::FusionPlan plan = fuse(graph);
  EXPECT_GE(plan.kernels.size(), 3u);
  for (const plan::Kernel& kernel : plan.kernels) EXPECT_LE(kernel.inputs.size(), 16u);
  bool input_bound_named = false;
  for (const plan::FusionRefusal& refusal : plan.refusals) {
    input_bound_named = input_bound_named || refusal.reason == "kernel reached 16 inputs";
  }
  EXPECT_TRUE(input_bound_named);
}

TEST(FusionTest, ConstantSharedByManyKernelsIsComputedOnce) {
  std::string text =
      "%x = data() : f32[4]\n%one = full() {value=1} : f32[]\n%a0 = add(%x, %one) "
      ": f32[4]\n";
  for (int i = 1; i < 200; ++i) {
    text += "%a" + std::to_string(i) + " = add(%a" + std::to_string(i - 1) + ", %one) : f32[4]\n";
  }
  text += "return %a199\n";
  const Graph graph = parse(text);
  const plan::FusionPlan plan = fuse(graph);
  EXPECT_EQ(plan.kernels.size(), 4u);
  EXPECT_EQ(positions_of(graph, plan.kernels[0].nodes).front(), 1);
}

// Numpy broadcasting of two shapes, or nothing if they do not broadcast.
std::optional<Shape> broadcast(const Shape& a, const Shape& b) {
  Shape result(std::max(a.size(), b.size()), 1);
  for (size_t i = 0; i < result.size(); ++i) {
    const int64_t x = i < a.size() ? a[a.size() - 1 - i] : 1;
    const int64_t y = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (x != y && x != 1 && y != 1) return std::nullopt;
    result[result.size() - 1 - i] = std::max(x, y);
  }
  return result;
}

// A random graph mixing every kind of op the rules distinguish: elementwise ops with
// broadcasting, reductions with and without keepdims, broadcasts back, transposes, reshapes,
// matmuls and constants, with shared values and user-held intermediates. Shapes are consistent;
// dtypes do not matter to fusion.
Graph random_graph(std::mt19937& random, int size) {
  const auto make = [](Op op, Shape shape, std::vector<NodePtr> inputs) {
    auto node = std::make_shared<Node>();
    node->op = op;
    node->shape = std::move(shape);
    node->inputs = std::move(inputs);
    return node;
  };
  std::vector<NodePtr> nodes{make(Op::Data, {4, 6}, {}), make(Op::Data, {6}, {}),
                             make(Op::Data, {6, 6}, {}), make(Op::Full, {}, {})};
  const auto pick = [&] {
    return nodes[std::uniform_int_distribution<size_t>(0, nodes.size() - 1)(random)];
  };
  while (static_cast<int>(nodes.size()) < size) {
    const NodePtr a = pick();
    const NodePtr b = pick();
    NodePtr node;
    switch (std::uniform_int_distribution<int>(0, 7)(random)) {
      case 0: node = make(Op::Exp, a->shape, {a}); break;
      case 1:
      case 2:
        if (const auto shape = broadcast(a->shape, b->shape)) {
          node = make(Op::Add, *shape, {a, b});
        }
        break;
      case 3:
        if (a->ndim() == 2) {
          const int64_t axis = std::uniform_int_distribution<int64_t>(0, 1)(random);
          const bool keepdims = random() % 2 == 0;
          Shape shape = a->shape;
          if (keepdims) {
            shape[axis] = 1;
          } else {
            shape.erase(shape.begin() + axis);
          }
          node = make(random() % 2 ? Op::Sum : Op::Max, shape, {a});
          node->set_attributes().axes = {axis};
          node->keepdims = keepdims;
        }
        break;
      case 4:
        if (broadcast(a->shape, {4, 6}) == Shape{4, 6}) {
          node = make(Op::BroadcastTo, {4, 6}, {a});
        }
        break;
      case 5:
        if (a->ndim() == 2) {
          node = make(Op::Transpose, {a->shape[1], a->shape[0]}, {a});
          node->set_attributes().axes = {1, 0};
        }
        break;
      case 6:
        if (a->ndim() == 1) node = make(Op::Reshape, {a->shape[0], 1}, {a});
        break;
      case 7:
        if (a->ndim() == 2 && a->shape[1] == 6) {
          node = make(Op::MatMul, {a->shape[0], 6}, {a, nodes[2]});
        }
        break;
    }
    if (node) nodes.push_back(std::move(node));
  }
  Graph graph;
  graph.outputs = {nodes.back()};
  for (int k = 0; k < 3; ++k) graph.outputs.push_back(pick());
  graph.nodes = std::move(nodes);
  return graph;
}

TEST(FusionTest, RandomGraphsGivePlansThatKeepEveryInvariant) {
  for (uint32_t seed = 0; seed < 300; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937 random(seed);
    const Graph graph = random_graph(random, 60);
    PassOptions small_kernels;
    small_kernels.max_kernel_ops = 6;
    small_kernels.max_kernel_inputs = 3;
    PassOptions unfused;
    unfused.fusion = false;
    for (const PassOptions& options : {PassOptions{}, small_kernels, unfused}) {
      const plan::FusionPlan plan = fuse(graph, options);
      if (HasFailure()) {
        ADD_FAILURE() << ir::print_graph(graph) << print_fusion_plan(plan, graph);
        return;
      }
    }
  }
}

TEST(FusionTest, PrintedPlanShowsKernelsAndReasons) {
  const Graph graph = parse(R"(
    %0 = data() : f32[3,4]
    %1 = data() : f32[3,4]
    %2 = mul(%0, %1) : f32[3,4]
    %3 = sum(%2) {axes=[1], keepdims=false} : f32[3]
    %4 = sum(%2) {axes=[0], keepdims=false} : f32[4]
    %5 = exp(%4) : f32[4]
    return %3, %5
  )");
  const plan::FusionPlan plan = fuse(graph);
  EXPECT_EQ(print_fusion_plan(plan, graph),
            "kernel 0 (2 ops, inputs %0 %1, outputs %2 %3):\n"
            "  %2 = mul(%0, %1) : f32[3,4]\n"
            "  %3 = sum(%2) {axes=[1], keepdims=false} : f32[3]\n"
            "  # not fused: %2 -> %4: consumer is a reduction over a different axis\n"
            "kernel 1 (2 ops, inputs %2, outputs %5):\n"
            "  %4 = sum(%2) {axes=[0], keepdims=false} : f32[4]\n"
            "  %5 = exp(%4) : f32[4]\n");
}

TEST(FusionTest, ACollectiveIsAKernelOfItsOwnPlacedRightAfterItsOperand) {
  // The sum comes first in the graph, but the all_sum of %a is needed first: the plan computes
  // %a, hands it to the communicator, and computes the sum while the ranks exchange it.
  const Graph graph = parse(R"(
    %x = data() : f32[64]
    %c = exp(%x) : f32[64]
    %d = sum(%c) {axes=[0], keepdims=false} : f32[]
    %a = mul(%x, %x) : f32[64]
    %b = all_sum(%a) {ranks=2, sequence=0} : f32[64]
    %e = all_sum(%d) {ranks=2, sequence=1} : f32[]
    %f = add(%b, %b) : f32[64]
    return %f, %e
  )");
  const plan::FusionPlan plan = fuse(graph);
  ASSERT_EQ(plan.kernels.size(), 5u);
  const auto root_op = [&](size_t k) { return plan.kernels[k].nodes.back()->op; };
  EXPECT_EQ(root_op(0), Op::Mul);
  EXPECT_EQ(root_op(1), Op::AllSum);
  EXPECT_EQ(plan.kernels[1].nodes.size(), 1u);
  EXPECT_EQ(plan.kernels[1].nodes.back()->collective().sequence, 0u);
  EXPECT_EQ(root_op(2), Op::Sum);
  EXPECT_EQ(root_op(3), Op::AllSum);
  EXPECT_EQ(root_op(4), Op::Add);
  EXPECT_EQ(reason_for(graph, plan, 3, 4),
            "consumer is a collective, which runs alone through the communicator");
  EXPECT_EQ(reason_for(graph, plan, 4, 6),
            "producer is a collective, which runs alone through the communicator");
}

TEST(FusionTest, CollectivesRunInTheOrderTheyWereRecordedWhateverTheGraphsOrder) {
  // %late (recorded second) comes first in the graph; the plan runs %early first, as soon as
  // its operand is computed, and %late after it.
  const Graph graph = parse(R"(
    %x = data() : f32[64]
    %a = exp(%x) : f32[64]
    %late = all_sum(%a) {ranks=2, sequence=8} : f32[64]
    %b = sin(%x) : f32[64]
    %early = all_sum(%b) {ranks=2, sequence=7} : f32[64]
    %c = add(%late, %early) : f32[64]
    return %c
  )");
  const plan::FusionPlan plan = fuse(graph);
  std::vector<uint64_t> sequences;
  for (const plan::Kernel& kernel : plan.kernels) {
    if (ir::is_collective(kernel.nodes.back()->op)) {
      sequences.push_back(kernel.nodes.back()->collective().sequence);
    }
  }
  EXPECT_EQ(sequences, (std::vector<uint64_t>{7, 8}));
  ASSERT_EQ(plan.kernels.size(), 4u);  // exp and sin, merged; the two collectives; the add
  EXPECT_EQ(plan.kernels[0].outputs.size(), 2u);
  EXPECT_EQ(plan.kernels[1].nodes.back()->collective().sequence, 7u);
  EXPECT_EQ(plan.kernels[2].nodes.back()->collective().sequence, 8u);
}

TEST(FusionTest, CollectivesWhoseSequenceContradictsTheirDataAreAnError) {
  const Graph graph = parse(R"(
    %x = data() : f32[4]
    %a = all_sum(%x) {ranks=2, sequence=5} : f32[4]
    %b = all_sum(%a) {ranks=2, sequence=4} : f32[4]
    return %b
  )");
  PassContext context(graph, {});
  try {
    make_pass("fuse")->run(context);
    ADD_FAILURE() << "a plan was made";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("sequence numbers contradict their data"),
              std::string::npos)
        << error.what();
  }
}

}  // namespace
}  // namespace lz::passes
