#include "ir/dot.h"

#include <charconv>
#include <map>
#include <string>
#include <unordered_map>

namespace lz::ir {
namespace {

void append_integer(std::string& out, uint64_t value) {
  char digits[24];
  const auto result = std::to_chars(digits, digits + sizeof(digits), value);
  out.append(digits, result.ptr);
}

// `text` inside a DOT double-quoted string.
void append_escaped(std::string& out, std::string_view text) {
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      out += '?';
    } else {
      out += c;
    }
  }
}

// `n<i> [label=..., ...];`: the node's number, op, attributes, type and output numbers, with its
// user's line as the tooltip. `outputs` is empty unless the node is a graph output.
void append_node(std::string& out, size_t i, const Node& node, const std::string& outputs,
                 const LocationOverrides& locations) {
  out += "  n";
  append_integer(out, i);
  out += " [label=\"%";
  append_integer(out, i);
  out += ' ';
  out += op_name(node.op);
  const std::string attributes = attributes_text(node);
  if (!attributes.empty()) {
    out += "\\n";
    append_escaped(out, attributes);
  }
  out += "\\n";
  out += type_text(node.dtype, node.shape);
  if (!outputs.empty()) {
    out += "\\noutput ";
    out += outputs;
  }
  out += '"';
  if (op_info(node.op).kind == OpKind::Leaf) {
    if (node.op == Op::Data) out += ", shape=cylinder";
    out += ", style=filled, fillcolor=\"#e4e4e4\"";
  }
  if (!outputs.empty()) out += ", color=\"#d62728\", penwidth=2.5";
  const TextLocation location = location_of(node, locations);
  if (!location.file.empty()) {
    out += ", tooltip=\"";
    append_escaped(out, location.file);
    out += ':';
    append_integer(out, location.line);
    out += ':';
    append_integer(out, location.column);
    out += '"';
  }
  out += "];\n";
}

// One edge per input of node i, labelled by the input's position when there are several; an input
// outside the graph comes from `missing`. Returns whether there was one.
bool append_input_edges(std::string& out, size_t i, const Node& node,
                        const NodePositions& positions) {
  bool has_missing = false;
  for (size_t k = 0; k < node.inputs.size(); ++k) {
    const auto found = positions.find(node.inputs[k].get());
    out += "  ";
    if (found == positions.end()) {
      has_missing = true;
      out += "missing";
    } else {
      out += 'n';
      append_integer(out, found->second);
    }
    out += " -> n";
    append_integer(out, i);
    if (node.inputs.size() > 1) {
      out += " [label=\"";
      append_integer(out, k);
      out += "\"]";
    }
    out += ";\n";
  }
  return has_missing;
}

}  // namespace

std::string graph_to_dot(const Graph& graph, const LocationOverrides& locations) {
  const auto positions = graph.index();
  // Output numbers by node position, in order (a node may be output more than once).
  std::map<int64_t, std::string> output_numbers;
  bool has_missing = false;
  for (size_t k = 0; k < graph.outputs.size(); ++k) {
    const auto found = positions.find(graph.outputs[k].get());
    if (found == positions.end()) {
      has_missing = true;
      continue;
    }
    std::string& numbers = output_numbers[found->second];
    numbers += (numbers.empty() ? "" : ", ") + std::to_string(k);
  }

  std::string out = "digraph lazuli {\n";
  out.reserve(graph.nodes.size() * 80);
  out += "  node [shape=box, style=rounded, fontname=\"monospace\"];\n";
  out += "  edge [fontname=\"monospace\", fontsize=10];\n";
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const Node* node = graph.nodes[i].get();
    if (node == nullptr) {
      out += "  n";
      append_integer(out, i);
      out += " [label=\"%";
      append_integer(out, i);
      out += " <null>\", color=red];\n";
      continue;
    }
    const auto output = output_numbers.find(static_cast<int64_t>(i));
    append_node(out, i, *node, output == output_numbers.end() ? "" : output->second, locations);
    has_missing = append_input_edges(out, i, *node, positions) || has_missing;
  }
  if (has_missing) {
    out += "  missing [label=\"not in the graph\", shape=octagon, color=\"#d62728\"];\n";
  }
  out += "}\n";
  return out;
}

}  // namespace lz::ir
