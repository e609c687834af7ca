#include "ir/printer.h"

#include <charconv>
#include <cmath>
#include <span>

namespace lz::ir {
namespace {

void append_integer(std::string& out, int64_t value) {
  char digits[24];
  const auto result = std::to_chars(digits, digits + sizeof(digits), value);
  out.append(digits, result.ptr);
}

void append_unsigned(std::string& out, uint64_t value) {
  char digits[24];
  const auto result = std::to_chars(digits, digits + sizeof(digits), value);
  out.append(digits, result.ptr);
}

// The shortest text that std::from_chars reads back to the same double.
void append_floating(std::string& out, double value) {
  if (std::isnan(value)) {
    out += "nan";
  } else if (std::isinf(value)) {
    out += value < 0 ? "-inf" : "inf";
  } else {
    char digits[32];
    const auto result = std::to_chars(digits, digits + sizeof(digits), value);
    out.append(digits, result.ptr);
  }
}

void append_scalar(std::string& out, const ScalarParam& param, DType dtype) {
  if (is_floating(dtype))
    append_floating(out, param.floating);
  else
    append_integer(out, param.integer);
}

void append_list(std::string& out, std::span<const int64_t> values) {
  out += '[';
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ',';
    append_integer(out, values[i]);
  }
  out += ']';
}

void append_type(std::string& out, DType dtype, const Shape& shape) {
  out += dtype_short_name(dtype);
  append_list(out, shape);
}

void append_attributes(std::string& out, const Node& node) {
  const auto scalar = [&](const char* key, int index) {
    out += key;
    append_scalar(out, node.params[index], param_dtype(node));
  };
  const auto seed = [&] {
    out += "{seed=";
    append_unsigned(out, node.seed);
  };
  switch (node.op) {
    case Op::Full: scalar("{value=", 0); break;
    case Op::Arange:
      scalar("{start=", 0);
      scalar(", step=", 1);
      break;
    case Op::RandomUniform:
      seed();
      scalar(", low=", 0);
      scalar(", high=", 1);
      break;
    case Op::RandomNormal:
      seed();
      scalar(", mean=", 0);
      scalar(", std=", 1);
      break;
    case Op::Sum:
    case Op::Max:
    case Op::Min:
    case Op::Argmax:
    case Op::Argmin:
      out += "{axes=";
      append_list(out, node.axes());
      out += node.keepdims ? ", keepdims=true" : ", keepdims=false";
      break;
    case Op::Transpose:
      out += "{perm=";
      append_list(out, node.axes());
      break;
    case Op::Concatenate:
    case Op::Gather:
      out += "{axis=";
      // A malformed node keeps its whole list visible; the parser rejects it.
      if (node.axes().size() == 1)
        append_integer(out, node.axes()[0]);
      else
        append_list(out, node.axes());
      break;
    case Op::AllSum:
    case Op::AllMax:
    case Op::AllMin:
    case Op::AllGather:
    case Op::ReduceScatter:
    case Op::Broadcast:
      out += "{ranks=";
      append_integer(out, node.collective().ranks);
      if (node.op == Op::Broadcast) {
        out += ", root=";
        append_integer(out, node.collective().root);
      }
      out += ", sequence=";
      append_unsigned(out, node.collective().sequence);
      break;
    case Op::Slice:
      out += "{starts=";
      append_list(out, node.starts());
      out += ", steps=";
      append_list(out, node.steps());
      break;
    default: return;
  }
  out += '}';
}

void append_quoted(std::string& out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (byte < 0x20 || byte == 0x7f) {
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    } else {
      out += c;
    }
  }
  out += '"';
}

void append_location(std::string& out, std::string_view file, uint32_t line, uint32_t column) {
  out += " loc(";
  append_quoted(out, file);
  out += ':';
  append_unsigned(out, line);
  out += ':';
  append_unsigned(out, column);
  out += ')';
}

}  // namespace

void LocationOverrides::set(const NodePtr& node, TextLocation location) {
  entries_.insert_or_assign(node.get(), Entry{node, std::move(location)});
}

const TextLocation* LocationOverrides::find(const Node& node) const {
  const auto entry = entries_.find(&node);
  if (entry == entries_.end()) return nullptr;
  if (entry->second.node.lock().get() != &node) return nullptr;
  return &entry->second.location;
}

std::string type_text(DType dtype, const Shape& shape) {
  std::string out;
  append_type(out, dtype, shape);
  return out;
}

std::string attributes_text(const Node& node) {
  std::string out;
  append_attributes(out, node);
  return out;
}

TextLocation location_of(const Node& node, const LocationOverrides& locations) {
  if (const TextLocation* location = locations.find(node)) return *location;
  const char* file = node.location.file_name();
  if (file == nullptr || *file == '\0') return {};
  return {file, node.location.line(), node.location.column()};
}

std::string print_graph(const Graph& graph, const LocationOverrides& locations) {
  const auto positions = graph.index();
  std::string out;
  out.reserve(graph.nodes.size() * 40);
  const auto append_name = [&](const Node* node) {
    const auto position = positions.find(node);
    if (position == positions.end()) {
      out += "%?";
    } else {
      out += '%';
      append_integer(out, position->second);
    }
  };

  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    out += '%';
    append_integer(out, static_cast<int64_t>(i));
    const Node* node = graph.nodes[i].get();
    if (node == nullptr) {
      out += " = <null>\n";
      continue;
    }
    out += " = ";
    out += op_name(node->op);
    out += '(';
    for (size_t k = 0; k < node->inputs.size(); ++k) {
      if (k > 0) out += ", ";
      append_name(node->inputs[k].get());
    }
    out += ')';
    const size_t before_attributes = out.size();
    out += ' ';
    append_attributes(out, *node);
    if (out.size() == before_attributes + 1) out.pop_back();
    out += " : ";
    append_type(out, node->dtype, node->shape);

    const TextLocation* location = locations.empty() ? nullptr : locations.find(*node);
    if (location != nullptr) {
      if (!location->file.empty()) {
        append_location(out, location->file, location->line, location->column);
      }
    } else if (const char* file = node->location.file_name(); file != nullptr && *file != '\0') {
      append_location(out, file, node->location.line(), node->location.column());
    }
    out += '\n';
  }

  out += "return";
  for (size_t k = 0; k < graph.outputs.size(); ++k) {
    out += k == 0 ? " " : ", ";
    append_name(graph.outputs[k].get());
  }
  out += '\n';
  return out;
}

}  // namespace lz::ir
