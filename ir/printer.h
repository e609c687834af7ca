// The IR text format: one op per line, SSA style. `lazuli-opt`, the dumps (LZ_DUMP) and the pass
// tests all read and write it; ir/parser.h reads it back.
//
//   %0 = data() : f32[3,4]
//   %1 = full() {value=2} : f32[] loc("examples/demo.cpp":12:7)
//   %2 = mul(%0, %1) : f32[3,4] loc("examples/demo.cpp":12:7)
//   %3 = sum(%2) {axes=[1], keepdims=false} : f32[3] loc("examples/demo.cpp":13:9)
//   %4 = slice(%0) {starts=[0,3], steps=[1,-2]} : f32[3,2]
//   %5 = random_normal() {seed=7, mean=0, std=1} : f64[2,2]
//   %6 = arange() {start=0, step=0.5} : f32[10]
//   %7 = transpose(%0) {perm=[1,0]} : f32[4,3]
//   %8 = concatenate(%0, %0) {axis=1} : f32[3,8]
//   %9 = astype(%3) : i64[3]
//   return %3, %4, %3
//
// - A node is named by its position in Graph::nodes (`%3`); operands are the names of its inputs.
// - `: dtype[shape]` is the node's type (`f32[]` for a 0-d tensor). It is also the target of the
//   ops whose result type is their attribute: `astype` (dtype), `reshape` and `broadcast_to`
//   (shape), `slice` (extents), and every leaf.
// - Attributes, in braces, appear only for the ops that use them, always all of them, in this
//   order: full {value}; arange {start, step}; random_uniform {seed, low, high}; random_normal
//   {seed, mean, std}; sum/max/min/argmax/argmin {axes, keepdims}; transpose {perm}; concatenate
//   {axis}; slice {starts, steps}.
// - Scalar values follow the node's dtype: integer and bool dtypes print ScalarParam::integer
//   exactly; floating dtypes print ScalarParam::floating in the shortest form that reads back to
//   the same double (`0.1`, `1e+300`, `-0`, `inf`, `-inf`, `nan`).
// - `loc("file":line:column)` is the node's source location, printed when its file name is
//   non-empty. In the file name `"` and `\` are escaped with `\`, control bytes as `\xHH`.
// - `return` lists the graph's outputs in order (a node may appear more than once).
// - A malformed graph still prints, so that it can be inspected: an input or output that is not
//   among the nodes prints as `%?`.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

#include "ir/graph.h"

namespace lz::ir {

/// A source location held as plain values. std::source_location can only be made by the
/// compiler, so locations read from IR text are kept here instead of in Node::location.
struct TextLocation {
  std::string file;
  uint32_t line = 0;
  uint32_t column = 0;
  friend bool operator==(const TextLocation&, const TextLocation&) = default;
};

/// Locations to print instead of Node::location, by node (the parser fills one so that
/// print -> parse -> print keeps the locations). Entries hold their node weakly: after the node
/// is freed its entry is ignored, never matched to a new node at the same address, so a table
/// stays correct while passes remove and create nodes.
class LocationOverrides {
 public:
  void set(const NodePtr& node, TextLocation location);
  /// The location recorded for `node`, or null.
  const TextLocation* find(const Node& node) const;
  bool empty() const { return entries_.empty(); }

 private:
  struct Entry {
    std::weak_ptr<const Node> node;
    TextLocation location;
  };
  std::unordered_map<const Node*, Entry> entries_;
};

/// The graph as IR text (format above). `locations` overrides Node::location where it has an
/// entry. Linear in the size of the graph, no recursion.
std::string print_graph(const Graph& graph, const LocationOverrides& locations = {});

/// `f32[3,4]`: a type as it appears in IR text.
std::string type_text(DType dtype, const Shape& shape);

/// `{axes=[1], keepdims=false}`: the node's attributes as printed, or "" for an op without any.
std::string attributes_text(const Node& node);

/// The location that `print_graph` shows for `node`: the override if any, else Node::location
/// (an empty file name meaning none).
TextLocation location_of(const Node& node, const LocationOverrides& locations = {});

}  // namespace lz::ir
