// What the tests of the rewriting passes (dce, cse, simplify) share: run one pass over a graph
// read from IR text, and compare the values the graph computes before and after it.
#pragma once

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "ir/clone.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "memory/buffer.h"
#include "passes/pass.h"
#include "reference/interpreter.h"

namespace lz::passes::test {

/// Runs pass `name` over `graph` and checks that the result is a valid graph.
/// A data leaf followed by `depth` chained negations (f32[]), without outputs: for deep-graph
/// tests.
inline ir::Graph negation_chain(int depth) {
  ir::Graph graph;
  auto leaf = std::make_shared<ir::Node>();
  leaf->op = ir::Op::Data;
  graph.nodes.push_back(leaf);
  for (int i = 0; i < depth; ++i) {
    auto node = std::make_shared<ir::Node>();
    node->op = ir::Op::Neg;
    node->inputs = {graph.nodes.back()};
    graph.nodes.push_back(std::move(node));
  }
  return graph;
}

inline ir::Graph run_pass(std::string_view name, ir::Graph graph) {
  PassContext context(std::move(graph));
  make_pass(name)->run(context);
  ir::verify(context.graph);
  return std::move(context.graph);
}

/// The printed result of running pass `name` over the graph of IR text `text`.
inline std::string rewrite(std::string_view name, std::string_view text) {
  return ir::print_graph(run_pass(name, ir::parse_graph(text).graph));
}

/// Values that tell correct rewrites from nearly correct ones: signed zeros, infinities, NaN,
/// subnormals, the integer extremes.
template <class T>
std::vector<T> tricky_values() {
  using Limits = std::numeric_limits<T>;
  if constexpr (std::is_same_v<T, bool>) {
    return {false, true, true};
  } else if constexpr (std::is_floating_point_v<T>) {
    return {T{1.5},
            T{-0.0},
            T{0.0},
            Limits::infinity(),
            T{-3},
            -Limits::infinity(),
            Limits::quiet_NaN(),
            Limits::denorm_min(),
            Limits::max(),
            T{0.1},
            T{-7.25},
            Limits::lowest()};
  } else {
    return {T{7}, T{0}, T{-1}, Limits::min(), Limits::max(), T{42}, T{-13}};
  }
}

/// Gives every data leaf of `graph` a buffer filled with tricky_values, cycled.
inline void fill_data_leaves(ir::Graph& graph) {
  for (const ir::NodePtr& node : graph.nodes) {
    if (node->op != ir::Op::Data) continue;
    node->buffer = memory::Buffer::allocate(node->dtype, node->size());
    const auto fill = [&]<class T>(T*) {
      const std::vector<T> values = tricky_values<T>();
      T* out = node->buffer->data_as<T>();
      for (int64_t i = 0; i < node->size(); ++i) out[i] = values[i % values.size()];
    };
    switch (node->dtype) {
      case DType::Float32: fill(static_cast<float*>(nullptr)); break;
      case DType::Float64: fill(static_cast<double*>(nullptr)); break;
      case DType::Int32: fill(static_cast<int32_t*>(nullptr)); break;
      case DType::Int64: fill(static_cast<int64_t*>(nullptr)); break;
      case DType::Bool: fill(static_cast<bool*>(nullptr)); break;
    }
  }
}

/// The buffers of graph.outputs, computed by the reference interpreter.
inline std::vector<std::shared_ptr<memory::Buffer>> interpret_outputs(const ir::Graph& graph) {
  const auto index = graph.index();
  std::vector<bool> keep(graph.nodes.size(), false);
  for (const ir::NodePtr& output : graph.outputs) keep[index.at(output.get())] = true;
  const auto results = reference::interpret(graph, keep);
  std::vector<std::shared_ptr<memory::Buffer>> outputs;
  for (const ir::NodePtr& output : graph.outputs)
    outputs.push_back(results[index.at(output.get())]);
  return outputs;
}

/// Whether two elements are the same bits, or both NaN (a NaN's payload is not a value).
template <class T>
bool same_element(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a) && std::isnan(b)) return true;
  }
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

/// Expects identical buffers: same dtype, size and elements (-0.0 differs from 0.0).
inline void expect_identical(const memory::Buffer& expected, const memory::Buffer& actual,
                             const std::string& what) {
  ASSERT_EQ(expected.dtype(), actual.dtype()) << what;
  ASSERT_EQ(expected.size(), actual.size()) << what;
  const auto compare = [&]<class T>(T*) {
    for (int64_t i = 0; i < expected.size(); ++i) {
      const T a = expected.data_as<T>()[i];
      const T b = actual.data_as<T>()[i];
      EXPECT_TRUE(same_element(a, b))
          << what << " element " << i << ": expected " << +a << ", got " << +b;
    }
  };
  switch (expected.dtype()) {
    case DType::Float32: return compare(static_cast<float*>(nullptr));
    case DType::Float64: return compare(static_cast<double*>(nullptr));
    case DType::Int32: return compare(static_cast<int32_t*>(nullptr));
    case DType::Int64: return compare(static_cast<int64_t*>(nullptr));
    case DType::Bool: return compare(static_cast<bool*>(nullptr));
  }
}

/// Runs pass `name` over the graph of `text` (data leaves filled with tricky values), expects
/// the printed result to be `expected_text`, and every output to hold exactly the values the
/// interpreter computes for the original graph.
inline void expect_rewrite_keeps_values(std::string_view name, std::string_view text,
                                        std::string_view expected_text) {
  ir::Graph original = ir::parse_graph(text).graph;
  fill_data_leaves(original);
  const ir::Graph rewritten = run_pass(name, ir::clone_graph(original));
  EXPECT_EQ(ir::print_graph(rewritten), expected_text);
  const auto expected = interpret_outputs(original);
  const auto actual = interpret_outputs(rewritten);
  ASSERT_EQ(expected.size(), actual.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    expect_identical(*expected[i], *actual[i], "output " + std::to_string(i));
  }
}

}  // namespace lz::passes::test
