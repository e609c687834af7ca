#include <gtest/gtest.h>

#include <string>

#include "graph_builder.h"
#include "ir/verifier.h"
#include "lazuli/error.h"
#include "memory/buffer.h"

namespace lz::ir {
namespace {

using test::data;
using test::make_node;

std::string verify_error(const Graph& graph) {
  try {
    verify(graph);
  } catch (const Error& error) {
    return error.what();
  }
  return "(no error)";
}

Graph graph_with(std::vector<NodePtr> nodes, std::vector<NodePtr> outputs) {
  Graph graph;
  graph.nodes = std::move(nodes);
  graph.outputs = std::move(outputs);
  return graph;
}

TEST(VerifierTest, AcceptsAValidGraphOfEveryOp) { EXPECT_NO_THROW(verify(test::all_ops_graph())); }

TEST(VerifierTest, AcceptsADataLeafWithAMatchingBuffer) {
  const NodePtr x = data(int32, {3, 4});
  x->buffer = memory::Buffer::allocate(int32, 12);
  EXPECT_NO_THROW(verify(test::graph_of({make_node(Op::Neg, {x})})));
}

TEST(VerifierTest, RejectsAnInputThatComesLater) {
  const NodePtr x = data(float32, {3});
  const NodePtr y = make_node(Op::Neg, {x});
  EXPECT_EQ(verify_error(graph_with({y, x}, {y})),
            "[verify] %0 (neg) input 0 is %1, which does not come before it; nodes must be in "
            "topological order");
}

TEST(VerifierTest, RejectsAnInputMissingFromTheGraph) {
  const NodePtr x = data(float32, {3});
  const NodePtr y = make_node(Op::Neg, {x});
  EXPECT_EQ(verify_error(graph_with({y}, {y})),
            "[verify] %0 (neg) input 0 is not a node of the graph");
}

TEST(VerifierTest, RejectsAnOutputMissingFromTheGraph) {
  const NodePtr x = data(float32, {3});
  const NodePtr y = make_node(Op::Neg, {x});
  EXPECT_EQ(verify_error(graph_with({x}, {x, y})),
            "[verify] output 1 (neg) is not a node of the graph");
}

TEST(VerifierTest, RejectsANodeListedTwice) {
  const NodePtr x = data(float32, {3});
  const NodePtr y = make_node(Op::Neg, {x});
  EXPECT_EQ(verify_error(graph_with({x, y, x}, {y})),
            "[verify] %2 (data) is the same node as %0; a graph lists each node once");
}

TEST(VerifierTest, RejectsNullNodesInputsAndOutputs) {
  const NodePtr x = data(float32, {3});
  EXPECT_EQ(verify_error(graph_with({x, nullptr}, {x})), "[verify] %1 is null");
  EXPECT_EQ(verify_error(graph_with({x}, {nullptr})), "[verify] output 0 is null");
  const NodePtr y = make_node(Op::Neg, {x});
  y->inputs[0] = nullptr;
  EXPECT_EQ(verify_error(graph_with({x, y}, {y})), "[verify] %1 (neg) input 0 is null");
}

TEST(VerifierTest, RejectsTheWrongNumberOfInputs) {
  const NodePtr x = data(float32, {3});
  const NodePtr y = make_node(Op::Neg, {x});
  y->inputs.push_back(x);
  EXPECT_EQ(verify_error(graph_with({x, y}, {y})),
            "[verify] %1 (neg) has 2 inputs but neg takes 1");
  const NodePtr joined =
      make_node(Op::Concatenate, {x}, [](Node& node) { node.set_attributes().axes = {0}; });
  joined->inputs.clear();
  EXPECT_EQ(verify_error(graph_with({joined}, {joined})),
            "[verify] %0 (concatenate) has 0 inputs but concatenate takes at least 1");
}

TEST(VerifierTest, RejectsAShapeOtherThanTheInferredOne) {
  const NodePtr a = data(float32, {3, 4});
  const NodePtr b = data(float32, {4});
  const NodePtr exp_a = make_node(Op::Exp, {a});
  const NodePtr neg_b = make_node(Op::Neg, {b});
  const NodePtr sum = make_node(Op::Add, {exp_a, neg_b});
  sum->shape = {3};
  EXPECT_EQ(verify_error(graph_with({a, b, exp_a, neg_b, sum}, {sum})),
            "[verify] %4 (add) is recorded as f32[3] but its inputs give f32[3,4]");
}

TEST(VerifierTest, RejectsADtypeOtherThanTheInferredOne) {
  const NodePtr x = data(float32, {2});
  const NodePtr y = make_node(Op::Less, {x, x});
  y->dtype = float32;
  EXPECT_EQ(verify_error(graph_with({x, y}, {y})),
            "[verify] %1 (less) is recorded as f32[2] but its inputs give bool[2]");
}

TEST(VerifierTest, RejectsANodeThatDoesNotTypeCheck) {
  const NodePtr a = data(float32, {3});
  const NodePtr b = data(float32, {3});
  const NodePtr sum = make_node(Op::Add, {a, b});
  b->shape = {4};
  EXPECT_EQ(verify_error(graph_with({a, b, sum}, {sum})),
            "[verify] %2 (add) is invalid: [add] shapes (3) and (4) cannot be broadcast: "
            "dimension 0 is 3 vs 4 (each pair must be equal or one of them 1)");
}

}  // namespace
}  // namespace lz::ir
