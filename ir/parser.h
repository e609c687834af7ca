// Reads IR text (the format of ir/printer.h) back into a Graph.
#pragma once

#include <string_view>

#include "ir/graph.h"
#include "ir/printer.h"

namespace lz::ir {

/// A graph read from text, with the locations its `loc(...)` clauses gave (Node::location cannot
/// hold them). `print_graph(parsed.graph, parsed.locations)` reproduces the printed text.
struct ParsedGraph {
  Graph graph;
  LocationOverrides locations;
};

/// Parses IR text. Besides what print_graph writes, the text may hold blank lines, `//` comments
/// and any names (`%x`, `%sum_1`) as long as each is defined once, before it is used; printing
/// the result numbers the nodes again. Every node is checked with infer_type and its declared type
/// must be the inferred one. `data` leaves get no buffer. Throws lz::Error
/// "[parse] line 3, column 17: expected ')' after operands, got ';'" on bad syntax and
/// "[parse] line 3: ..." on an ill-typed node.
ParsedGraph parse_graph(std::string_view text);

}  // namespace lz::ir
