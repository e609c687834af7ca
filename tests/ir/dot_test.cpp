#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "graph_builder.h"
#include "ir/dot.h"

namespace lz::ir {
namespace {

using test::data;
using test::graph_of;
using test::make_node;

bool graphviz_available() { return std::system("command -v dot > /dev/null 2>&1") == 0; }

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

struct DotRun {
  int status;
  std::string svg;
  std::string errors;
};

// Runs `dot -Tsvg` over `source` in a fresh temporary directory.
DotRun run_dot(const std::string& source) {
  const std::filesystem::path directory =
      std::filesystem::temp_directory_path() /
      ("lazuli_dot_test_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
       "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::filesystem::create_directories(directory);
  std::ofstream(directory / "graph.dot") << source;
  const std::string command = "dot -Tsvg '" + (directory / "graph.dot").string() + "' -o '" +
                              (directory / "graph.svg").string() + "' 2> '" +
                              (directory / "errors.txt").string() + "'";
  DotRun run{std::system(command.c_str()), read_file(directory / "graph.svg"),
             read_file(directory / "errors.txt")};
  std::filesystem::remove_all(directory);
  return run;
}

TEST(DotTest, EveryOpIsAcceptedByGraphvizWithoutWarnings) {
  if (!graphviz_available()) GTEST_SKIP() << "graphviz is missing: `dot` is not on PATH";
  const DotRun run = run_dot(graph_to_dot(test::all_ops_graph()));
  EXPECT_EQ(run.status, 0) << run.errors;
  EXPECT_EQ(run.errors, "");
  EXPECT_NE(run.svg.find("<svg"), std::string::npos);
}

TEST(DotTest, QuotesAndBackslashesInLocationsKeepTheOutputValid) {
  if (!graphviz_available()) GTEST_SKIP() << "graphviz is missing: `dot` is not on PATH";
  const NodePtr x = data(float32, {2});
  LocationOverrides locations;
  locations.set(x, {"dir\\a \"quoted\".cpp", 3, 9});
  const std::string dot = graph_to_dot(graph_of({x}), locations);
  EXPECT_NE(dot.find("tooltip=\"dir\\\\a \\\"quoted\\\".cpp:3:9\""), std::string::npos) << dot;
  const DotRun run = run_dot(dot);
  EXPECT_EQ(run.status, 0) << run.errors;
  EXPECT_EQ(run.errors, "");
}

TEST(DotTest, EachInputIsAnEdgeToItsConsumerNumberedByOperand) {
  const NodePtr a = data(float32, {3});
  const NodePtr b = data(float32, {3});
  const NodePtr difference = make_node(Op::Sub, {b, a});
  const NodePtr negated = make_node(Op::Neg, {difference});
  const std::string dot = graph_to_dot(graph_of({negated}));
  // collect puts b at %0, a at %1, sub at %2, neg at %3.
  EXPECT_NE(dot.find("  n0 -> n2 [label=\"0\"];\n"), std::string::npos) << dot;
  EXPECT_NE(dot.find("  n1 -> n2 [label=\"1\"];\n"), std::string::npos) << dot;
  EXPECT_NE(dot.find("  n2 -> n3;\n"), std::string::npos) << dot;
  EXPECT_EQ(dot.find("n3 ->"), std::string::npos) << dot;
  EXPECT_EQ(dot.rfind("digraph lazuli {\n", 0), 0u);
}

TEST(DotTest, LabelsShowNameOpAttributesAndType) {
  const NodePtr total = test::reduce(Op::Sum, data(float32, {3, 4}), {1}, false);
  const std::string dot = graph_to_dot(graph_of({total}));
  EXPECT_NE(dot.find("label=\"%1 sum\\n{axes=[1], keepdims=false}\\nf32[3]"), std::string::npos)
      << dot;
}

TEST(DotTest, OutputsAreHighlightedAndLeavesStyledDifferently) {
  const NodePtr x = data(float32, {3});
  const NodePtr y = make_node(Op::Exp, {x});
  const NodePtr z = make_node(Op::Neg, {y});
  const std::string dot = graph_to_dot(graph_of({z, x, z}));
  const auto line_of = [&](const std::string& id) {
    const size_t start = dot.find("  " + id + " [");
    return dot.substr(start, dot.find('\n', start) - start);
  };
  EXPECT_NE(line_of("n0").find("shape=cylinder, style=filled"), std::string::npos) << dot;
  EXPECT_NE(line_of("n0").find("\\noutput 1\""), std::string::npos) << dot;
  EXPECT_NE(line_of("n0").find("penwidth"), std::string::npos) << dot;
  EXPECT_EQ(line_of("n1").find("filled"), std::string::npos) << dot;
  EXPECT_EQ(line_of("n1").find("penwidth"), std::string::npos) << dot;
  EXPECT_NE(line_of("n2").find("\\noutput 0, 2\""), std::string::npos) << dot;
  EXPECT_NE(line_of("n2").find("penwidth"), std::string::npos) << dot;
}

}  // namespace
}  // namespace lz::ir
