#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <source_location>
#include <string>

#include "graph_builder.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "lazuli/error.h"

namespace lz::ir {
namespace {

using test::data;
using test::full;
using test::graph_of;
using test::make_node;
using test::sample_node;

// Field-by-field comparison of two graphs, independent of the printer: the parsed graph must
// rebuild every node, not merely print the same text.
void expect_same_graph(const Graph& expected, const Graph& actual) {
  ASSERT_EQ(expected.nodes.size(), actual.nodes.size());
  const auto expected_positions = expected.index();
  const auto actual_positions = actual.index();
  for (size_t i = 0; i < expected.nodes.size(); ++i) {
    SCOPED_TRACE("node %" + std::to_string(i));
    const Node& a = *expected.nodes[i];
    const Node& b = *actual.nodes[i];
    EXPECT_EQ(a.op, b.op);
    EXPECT_EQ(a.dtype, b.dtype);
    EXPECT_EQ(a.shape, b.shape);
    EXPECT_EQ(a.keepdims, b.keepdims);
    EXPECT_EQ(a.axes(), b.axes());
    EXPECT_EQ(a.starts(), b.starts());
    EXPECT_EQ(a.steps(), b.steps());
    EXPECT_EQ(a.collective(), b.collective());
    EXPECT_EQ(a.seed, b.seed);
    for (int k = 0; k < 2; ++k) {
      if (is_floating(a.dtype)) {
        EXPECT_EQ(std::bit_cast<uint64_t>(a.params[k].floating),
                  std::bit_cast<uint64_t>(b.params[k].floating));
      } else {
        EXPECT_EQ(a.params[k].integer, b.params[k].integer);
      }
    }
    EXPECT_EQ(b.buffer, nullptr);
    ASSERT_EQ(a.inputs.size(), b.inputs.size());
    for (size_t k = 0; k < a.inputs.size(); ++k) {
      EXPECT_EQ(expected_positions.at(a.inputs[k].get()), actual_positions.at(b.inputs[k].get()));
    }
  }
  ASSERT_EQ(expected.outputs.size(), actual.outputs.size());
  for (size_t k = 0; k < expected.outputs.size(); ++k) {
    EXPECT_EQ(expected_positions.at(expected.outputs[k].get()),
              actual_positions.at(actual.outputs[k].get()));
  }
}

std::string parse_error(std::string_view text) {
  try {
    parse_graph(text);
  } catch (const Error& error) {
    return error.what();
  }
  return "(no error)";
}

TEST(PrinterTest, PrintsSmallGraphInTheDocumentedFormat) {
  const NodePtr x = data(float32, {3, 4});
  const NodePtr two = full(float32, {}, ScalarParam::of(2));
  const std::source_location here = std::source_location::current();
  const NodePtr product = make_node(Op::Mul, {x, two});
  product->location = here;
  const NodePtr total = test::reduce(Op::Sum, product, {1}, false);
  const NodePtr every_other = test::slice(x, {0, 3}, {1, -2}, {3, 2});

  const std::string expected =
      "%0 = data() : f32[3,4]\n"
      "%1 = full() {value=2} : f32[]\n"
      "%2 = mul(%0, %1) : f32[3,4] loc(\"" +
      std::string(here.file_name()) + "\":" + std::to_string(here.line()) + ":" +
      std::to_string(here.column()) +
      ")\n"
      "%3 = sum(%2) {axes=[1], keepdims=false} : f32[3]\n"
      "%4 = slice(%0) {starts=[0,3], steps=[1,-2]} : f32[3,2]\n"
      "return %3, %4, %3\n";
  EXPECT_EQ(print_graph(graph_of({total, every_other, total})), expected);
}

TEST(PrinterParserTest, DocumentedExampleRoundTrips) {
  // The example at the top of ir/printer.h.
  const std::string text =
      "%0 = data() : f32[3,4]\n"
      "%1 = full() {value=2} : f32[] loc(\"examples/demo.cpp\":12:7)\n"
      "%2 = mul(%0, %1) : f32[3,4] loc(\"examples/demo.cpp\":12:7)\n"
      "%3 = sum(%2) {axes=[1], keepdims=false} : f32[3] loc(\"examples/demo.cpp\":13:9)\n"
      "%4 = slice(%0) {starts=[0,3], steps=[1,-2]} : f32[3,2]\n"
      "%5 = random_normal() {seed=7, mean=0, std=1} : f64[2,2]\n"
      "%6 = arange() {start=0, step=0.5} : f32[10]\n"
      "%7 = transpose(%0) {perm=[1,0]} : f32[4,3]\n"
      "%8 = concatenate(%0, %0) {axis=1} : f32[3,8]\n"
      "%9 = astype(%3) : i64[3]\n"
      "return %3, %4, %3\n";
  const ParsedGraph parsed = parse_graph(text);
  EXPECT_EQ(print_graph(parsed.graph, parsed.locations), text);
  EXPECT_EQ(print_graph(parsed.graph),
            "%0 = data() : f32[3,4]\n"
            "%1 = full() {value=2} : f32[]\n"
            "%2 = mul(%0, %1) : f32[3,4]\n"
            "%3 = sum(%2) {axes=[1], keepdims=false} : f32[3]\n"
            "%4 = slice(%0) {starts=[0,3], steps=[1,-2]} : f32[3,2]\n"
            "%5 = random_normal() {seed=7, mean=0, std=1} : f64[2,2]\n"
            "%6 = arange() {start=0, step=0.5} : f32[10]\n"
            "%7 = transpose(%0) {perm=[1,0]} : f32[4,3]\n"
            "%8 = concatenate(%0, %0) {axis=1} : f32[3,8]\n"
            "%9 = astype(%3) : i64[3]\n"
            "return %3, %4, %3\n");
}

TEST(PrinterTest, PrintsEachOpsAttributesAndNoOthers) {
  const auto line_of = [](Op op) {
    const std::string text = print_graph(graph_of({sample_node(op)}));
    const size_t end = text.find("\nreturn");
    const size_t start = text.rfind('\n', end - 1) + 1;
    return text.substr(start, end - start);
  };
  EXPECT_EQ(line_of(Op::Full), "%0 = full() {value=0.1} : f64[2]");
  EXPECT_EQ(line_of(Op::Arange), "%0 = arange() {start=-3, step=2} : i64[5]");
  EXPECT_EQ(line_of(Op::RandomUniform),
            "%0 = random_uniform() {seed=7, low=-1, high=0.25} : f32[2,2]");
  EXPECT_EQ(line_of(Op::RandomNormal),
            "%0 = random_normal() {seed=18446744073709551615, mean=0.1, std=3} : f64[4]");
  EXPECT_EQ(line_of(Op::Argmax), "%1 = argmax(%0) {axes=[2], keepdims=true} : i64[2,3,1]");
  EXPECT_EQ(line_of(Op::Transpose), "%1 = transpose(%0) {perm=[2,0,1]} : f32[4,2,3]");
  EXPECT_EQ(line_of(Op::Concatenate), "%3 = concatenate(%0, %1, %2) {axis=1} : f32[2,6]");
  EXPECT_EQ(line_of(Op::Gather), "%2 = gather(%0, %1) {axis=0} : f32[2,3]");
  EXPECT_EQ(line_of(Op::Astype), "%1 = astype(%0) : i32[2,3]");
  EXPECT_EQ(line_of(Op::Reshape), "%1 = reshape(%0) : f32[3,4]");
  EXPECT_EQ(line_of(Op::Less), "%2 = less(%0, %1) : bool[3,4]");
}

TEST(PrinterParserTest, RandomBoundsOfAnIntegerTensorKeepTheirFraction) {
  // The bounds are real numbers whatever the result dtype (ir::param_dtype).
  const std::string text =
      "%0 = random_uniform() {seed=3, low=0.5, high=4.25} : i32[8]\n"
      "return %0\n";
  const ParsedGraph parsed = parse_graph(text);
  EXPECT_EQ(parsed.graph.nodes[0]->params[0].floating, 0.5);
  EXPECT_EQ(parsed.graph.nodes[0]->params[1].floating, 4.25);
  EXPECT_EQ(print_graph(parsed.graph), text);
}

TEST(PrinterTest, FileNamesInLocationsAreEscaped) {
  const NodePtr x = data(float32, {2});
  LocationOverrides locations;
  locations.set(x, {"dir\\a \"b\".cpp\n", 12, 7});
  EXPECT_EQ(print_graph(graph_of({x}), locations),
            "%0 = data() : f32[2] loc(\"dir\\\\a \\\"b\\\".cpp\\x0a\":12:7)\nreturn %0\n");
}

TEST(PrinterTest, LocationOverrideOfAFreedNodeIsNotReused) {
  LocationOverrides locations;
  {
    const NodePtr gone = data(float32, {2});
    locations.set(gone, {"old.cpp", 1, 1});
  }
  const NodePtr x = data(float32, {2});
  EXPECT_EQ(locations.find(*x), nullptr);
  EXPECT_EQ(print_graph(graph_of({x}), locations), "%0 = data() : f32[2]\nreturn %0\n");
}

TEST(PrinterParserTest, EveryOpRoundTripsThroughText) {
  for (int i = 0; i < kOpCount; ++i) {
    const Op op = static_cast<Op>(i);
    SCOPED_TRACE(std::string(op_name(op)));
    const NodePtr node = sample_node(op);
    ASSERT_NE(node, nullptr) << "tests/ir/graph_builder.h has no sample for " << op_name(op);
    node->location = std::source_location::current();
    const Graph graph = graph_of({node, node});
    const std::string text = print_graph(graph);
    ASSERT_NE(text.find(" = " + std::string(op_name(op)) + "("), std::string::npos) << text;

    const ParsedGraph parsed = parse_graph(text);
    EXPECT_EQ(print_graph(parsed.graph, parsed.locations), text);
    expect_same_graph(graph, parsed.graph);
  }
}

TEST(PrinterParserTest, FloatingScalarsRoundTripBitExactly) {
  const double values[] = {0.1,
                           -0.0,
                           1e-310,
                           std::numeric_limits<double>::max(),
                           std::numeric_limits<double>::min(),
                           -1.0 / 3.0,
                           std::numeric_limits<double>::infinity(),
                           -std::numeric_limits<double>::infinity(),
                           12345678901234567890.0};
  for (const double value : values) {
    SCOPED_TRACE(value);
    const Graph graph = graph_of({full(float64, {}, ScalarParam::of(value))});
    const std::string text = print_graph(graph);
    const ParsedGraph parsed = parse_graph(text);
    EXPECT_EQ(std::bit_cast<uint64_t>(parsed.graph.nodes[0]->params[0].floating),
              std::bit_cast<uint64_t>(value));
    EXPECT_EQ(print_graph(parsed.graph), text);
  }
  const Graph graph = graph_of({full(float32, {}, ScalarParam{std::nan(""), 0})});
  EXPECT_EQ(print_graph(graph), "%0 = full() {value=nan} : f32[]\nreturn %0\n");
  EXPECT_TRUE(std::isnan(parse_graph(print_graph(graph)).graph.nodes[0]->params[0].floating));
}

TEST(PrinterParserTest, IntegerScalarsPrintExactly) {
  const int64_t lowest = std::numeric_limits<int64_t>::min();
  const int64_t highest = std::numeric_limits<int64_t>::max();
  const NodePtr range = test::leaf(Op::Arange, int64, {3}, [&](Node& node) {
    node.params[0] = ScalarParam::of_integer(lowest);
    node.params[1] = ScalarParam::of_integer(highest);
  });
  const std::string text = print_graph(graph_of({range}));
  EXPECT_EQ(text,
            "%0 = arange() {start=-9223372036854775808, step=9223372036854775807} : i64[3]\n"
            "return %0\n");
  const ParsedGraph parsed_graph = parse_graph(text);
  const Node& parsed = *parsed_graph.graph.nodes[0];
  EXPECT_EQ(parsed.params[0].integer, lowest);
  EXPECT_EQ(parsed.params[1].integer, highest);
}

TEST(ParserTest, AcceptsCommentsBlankLinesAndAnyNamesAndNumbersNodesAgain) {
  const ParsedGraph parsed = parse_graph(
      "// a comment line\n"
      "\n"
      "  %x = data() : f32[3]   // trailing comment\r\n"
      "%y = sum(%x) {keepdims=true, axes=[0]} : f32[1]\n"
      "return %y, %x\n"
      "// done\n");
  EXPECT_EQ(print_graph(parsed.graph),
            "%0 = data() : f32[3]\n"
            "%1 = sum(%0) {axes=[0], keepdims=true} : f32[1]\n"
            "return %1, %0\n");
}

TEST(ParserTest, ReadsLocationsIntoTheOverrides) {
  const ParsedGraph parsed = parse_graph(
      "%0 = data() : f32[2] loc(\"a \\\"q\\\" \\\\ \\x41.cpp\":12:7)\n"
      "return %0\n");
  const TextLocation* location = parsed.locations.find(*parsed.graph.nodes[0]);
  ASSERT_NE(location, nullptr);
  EXPECT_EQ(*location, (TextLocation{"a \"q\" \\ A.cpp", 12, 7}));
}

TEST(ParserTest, DataLeavesHaveNoBuffer) {
  const ParsedGraph parsed = parse_graph("%0 = data() : f32[2]\nreturn %0\n");
  EXPECT_EQ(parsed.graph.nodes[0]->buffer, nullptr);
}

struct ParseErrorCase {
  const char* text;
  const char* message;
};

TEST(ParserTest, SyntaxErrorsNameLineColumnAndWhatWasExpected) {
  const ParseErrorCase cases[] = {
      {"%0 = data() : f32[3]\n%1 = neg(%0 : f32[3]\nreturn %1\n",
       "[parse] line 2, column 13: expected ')' after operands, got ':'"},
      {"%0 = frobnicate() : f32[]\nreturn %0\n",
       "[parse] line 1, column 6: unknown op 'frobnicate'"},
      {"%0 = data() : f32[]\n%1 = neg(%7) : f32[]\nreturn %1\n",
       "[parse] line 2, column 10: %7 is not defined; a name must be defined on an earlier line "
       "than its uses"},
      {"%0 = data() : f32[]\n%0 = data() : f32[]\nreturn %0\n",
       "[parse] line 2, column 1: %0 is defined twice (first on line 1)"},
      {"%0 = data() : f16[2]\nreturn %0\n",
       "[parse] line 1, column 15: unknown dtype 'f16'; expected f32, f64, i32, i64 or bool"},
      {"%0 = data() : f32[2]\n%1 = sum(%0) {axes=[0]} : f32[]\nreturn %1\n",
       "[parse] line 2, column 24: sum needs the attribute 'keepdims'"},
      {"%0 = data() : f32[2]\n%1 = neg(%0) {axes=[0]} : f32[2]\nreturn %1\n",
       "[parse] line 2, column 15: neg has no attribute 'axes'; it takes none"},
      {"%0 = full() {value=2.5} : i32[]\nreturn %0\n",
       "[parse] line 1, column 20: expected an integer for the i32 node, got '2.5'"},
      {"%0 = random_uniform() {seed=-1, low=0, high=1} : f32[]\nreturn %0\n",
       "[parse] line 1, column 29: expected a seed (an unsigned integer), got '-1'"},
      {"%0 = data() : f32[2] loc(\"a.cpp:1:2)\nreturn %0\n",
       "[parse] line 1, column 37: the file name has no closing '\"'"},
      {"%0 = data() : f32[99999999999,99999999999]\nreturn %0\n",
       "[parse] line 1, column 18: the shape has more elements than an int64 can count"},
      {"%0 = data() : f32[2]\nreturn %0\n%1 = data() : f32[2]\n",
       "[parse] line 3, column 1: expected nothing after the 'return' line, got '%1'"},
      {"%0 = data() : f32[2]\nreturn %0 %0\n",
       "[parse] line 2, column 11: expected end of line after the outputs, got '%0'"},
  };
  for (const ParseErrorCase& test_case : cases) {
    EXPECT_EQ(parse_error(test_case.text), test_case.message) << test_case.text;
  }
}

TEST(ParserTest, TextWithoutReturnIsRejected) {
  EXPECT_EQ(parse_error("%0 = data() : f32[2]"),
            "[parse] line 1: the text ends without a 'return' line listing the outputs");
}

TEST(ParserTest, DeclaredTypeMustBeTheInferredType) {
  EXPECT_EQ(parse_error("%0 = data() : f32[3,4]\n"
                        "%1 = data() : f32[4]\n"
                        "%2 = add(%0, %1) : f32[3]\n"
                        "return %2\n"),
            "[parse] line 3: %2 (add) is declared f32[3] but its inputs give f32[3,4]");
  EXPECT_EQ(parse_error("%0 = data() : i32[3]\n"
                        "%1 = neg(%0) : f32[3]\n"
                        "return %1\n"),
            "[parse] line 2: %1 (neg) is declared f32[3] but its inputs give i32[3]");
}

TEST(ParserTest, IllTypedNodesReportTheTypingError) {
  EXPECT_EQ(parse_error("%0 = data() : f32[3]\n"
                        "%1 = data() : f32[4]\n"
                        "%2 = add(%0, %1) : f32[3]\n"
                        "return %2\n"),
            "[parse] line 3: %2: [add] shapes (3) and (4) cannot be broadcast: dimension 0 is 3 "
            "vs 4 (each pair must be equal or one of them 1)");
  EXPECT_EQ(parse_error("%0 = data() : f32[3]\n"
                        "%1 = add(%0) : f32[3]\n"
                        "return %1\n"),
            "[parse] line 2: %1: [add] takes 2 inputs, got 1");
}

TEST(ParserTest, ACollectiveOfNoRanksOrARootOutsideTheGroupIsRejected) {
  EXPECT_EQ(parse_error("%0 = data() : f32[3]\n"
                        "%1 = all_sum(%0) {ranks=0, sequence=1} : f32[3]\n"
                        "return %1\n"),
            "[parse] line 2: %1: [all_sum] ranks 0 must be a positive count");
  EXPECT_EQ(parse_error("%0 = data() : f32[3]\n"
                        "%1 = broadcast(%0) {ranks=2, root=2, sequence=1} : f32[3]\n"
                        "return %1\n"),
            "[parse] line 2: %1: [broadcast] root 2 is not a rank of the group: valid ranks are "
            "0..1");
}

}  // namespace
}  // namespace lz::ir
