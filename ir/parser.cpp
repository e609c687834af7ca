#include "ir/parser.h"

#include <array>
#include <charconv>
#include <cmath>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>

#include "ir/type_inference.h"
#include "lazuli/error.h"

namespace lz::ir {
namespace {

// The attributes each op takes, in printing order (see ir/printer.h).
std::span<const std::string_view> attribute_keys(Op op) {
  static constexpr std::string_view kFull[] = {"value"};
  static constexpr std::string_view kArange[] = {"start", "step"};
  static constexpr std::string_view kRandomUniform[] = {"seed", "low", "high"};
  static constexpr std::string_view kRandomNormal[] = {"seed", "mean", "std"};
  static constexpr std::string_view kReduction[] = {"axes", "keepdims"};
  static constexpr std::string_view kTranspose[] = {"perm"};
  static constexpr std::string_view kConcatenate[] = {"axis"};
  static constexpr std::string_view kSlice[] = {"starts", "steps"};
  static constexpr std::string_view kCollective[] = {"ranks", "sequence"};
  static constexpr std::string_view kBroadcast[] = {"ranks", "root", "sequence"};
  switch (op) {
    case Op::Full: return kFull;
    case Op::Arange: return kArange;
    case Op::RandomUniform: return kRandomUniform;
    case Op::RandomNormal: return kRandomNormal;
    case Op::Sum:
    case Op::Max:
    case Op::Min:
    case Op::Argmax:
    case Op::Argmin: return kReduction;
    case Op::Transpose: return kTranspose;
    case Op::Concatenate:
    case Op::Gather: return kConcatenate;
    case Op::Slice: return kSlice;
    case Op::AllSum:
    case Op::AllMax:
    case Op::AllMin:
    case Op::AllGather:
    case Op::ReduceScatter: return kCollective;
    case Op::Broadcast: return kBroadcast;
    default: return {};
  }
}

// Which of params[0] / params[1] a scalar attribute fills; -1 for other attributes.
int scalar_index(std::string_view key) {
  if (key == "value" || key == "start" || key == "low" || key == "mean") return 0;
  if (key == "step" || key == "high" || key == "std") return 1;
  return -1;
}

std::optional<DType> dtype_from_short_name(std::string_view name) {
  for (DType dtype : kAllDTypes) {
    if (name == dtype_short_name(dtype)) return dtype;
  }
  return std::nullopt;
}

bool is_identifier_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// Characters of a number token: digits, signs, '.', exponents, inf, nan.
bool is_number_char(char c) { return is_identifier_char(c) || c == '.' || c == '-' || c == '+'; }

// The double's value truncated toward zero, or 0 where that is not an int64 (inf, nan, huge),
// like ScalarParam::of without its undefined cases.
int64_t truncate_to_integer(double value) {
  if (!(value >= -0x1p63 && value < 0x1p63)) return 0;
  return static_cast<int64_t>(value);
}

// The text in single quotes for a message, control bytes written as \xHH so that a stray NUL or
// carriage return in the input shows in the message instead of cutting it short.
std::string quoted(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "'";
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) {
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    } else {
      out += c;
    }
  }
  return out + "'";
}

// A scalar attribute's text, read before the node's dtype (which says how to read it) is known.
struct PendingScalar {
  std::string_view text;
  size_t column = 0;
};

class Parser {
  struct Definition {
    size_t position;  // in result_.graph.nodes
    int64_t line;
  };

 public:
  explicit Parser(std::string_view text) : text_(text) {}

  ParsedGraph parse() {
    size_t start = 0;
    bool returned = false;
    while (start <= text_.size()) {
      size_t end = text_.find('\n', start);
      if (end == std::string_view::npos) end = text_.size();
      line_ = text_.substr(start, end - start);
      if (!line_.empty() && line_.back() == '\r') line_.remove_suffix(1);
      start = end + 1;
      ++line_number_;
      cursor_ = 0;
      if (at_end()) continue;
      if (returned) fail("expected nothing after the 'return' line, got " + next_token());
      if (peek_identifier() == "return") {
        parse_return();
        returned = true;
      } else {
        parse_definition();
      }
    }
    if (!returned) fail_line("the text ends without a 'return' line listing the outputs");
    return std::move(result_);
  }

 private:
  // ---- Errors ----

  [[noreturn]] void fail_at(size_t cursor, const std::string& message) const {
    throw Error("[parse] line " + std::to_string(line_number_) + ", column " +
                std::to_string(cursor + 1) + ": " + message);
  }
  [[noreturn]] void fail(const std::string& message) const { fail_at(cursor_, message); }
  [[noreturn]] void fail_line(const std::string& message) const {
    throw Error("[parse] line " + std::to_string(line_number_) + ": " + message);
  }

  // ---- Characters and tokens ----

  void skip_space() {
    while (cursor_ < line_.size() && (line_[cursor_] == ' ' || line_[cursor_] == '\t')) ++cursor_;
  }

  // True at the end of the line or at a `//` comment.
  bool at_end() {
    skip_space();
    return cursor_ >= line_.size() || line_.substr(cursor_).starts_with("//");
  }

  // The next token as quoted text for messages, or "end of line".
  std::string next_token() {
    if (at_end()) return "end of line";
    size_t end = cursor_ + (line_[cursor_] == '%' ? 1 : 0);
    while (end < line_.size() && is_number_char(line_[end])) ++end;
    if (end == cursor_) end = cursor_ + 1;
    return quoted(line_.substr(cursor_, end - cursor_));
  }

  bool consume(char c) {
    if (at_end() || line_[cursor_] != c) return false;
    ++cursor_;
    return true;
  }

  void expect(char c, std::string_view context) {
    if (!consume(c)) {
      fail("expected '" + std::string(1, c) + "' " + std::string(context) + ", got " +
           next_token());
    }
  }

  void expect_end(std::string_view context) {
    if (!at_end()) fail("expected end of line " + std::string(context) + ", got " + next_token());
  }

  std::string_view peek_identifier() {
    skip_space();
    size_t end = cursor_;
    while (end < line_.size() && is_identifier_char(line_[end])) ++end;
    return line_.substr(cursor_, end - cursor_);
  }

  std::string_view read_identifier(std::string_view what) {
    const std::string_view word = peek_identifier();
    if (word.empty()) fail("expected " + std::string(what) + ", got " + next_token());
    cursor_ += word.size();
    return word;
  }

  std::string_view read_number_token(std::string_view what) {
    skip_space();
    size_t end = cursor_;
    while (end < line_.size() && is_number_char(line_[end])) ++end;
    if (end == cursor_) fail("expected " + std::string(what) + ", got " + next_token());
    const std::string_view token = line_.substr(cursor_, end - cursor_);
    cursor_ = end;
    return token;
  }

  // Reads an integer of type T (int64_t, uint64_t, uint32_t), the whole token.
  template <class T>
  T read_integer(std::string_view what) {
    skip_space();
    const size_t column = cursor_;
    const std::string_view token = read_number_token(what);
    T value{};
    const auto [end, error] = std::from_chars(token.data(), token.data() + token.size(), value);
    if (error == std::errc::result_out_of_range && end == token.data() + token.size()) {
      fail_at(column, std::string(what) + " " + quoted(token) + " is out of range");
    }
    if (error != std::errc() || end != token.data() + token.size()) {
      fail_at(column, "expected " + std::string(what) + ", got " + quoted(token));
    }
    return value;
  }

  std::vector<int64_t> read_list(std::string_view context) {
    expect('[', context);
    std::vector<int64_t> values;
    if (consume(']')) return values;
    do {
      values.push_back(read_integer<int64_t>("an integer"));
    } while (consume(','));
    expect(']', "after the list");
    return values;
  }

  // %name: returns the name with its '%'.
  std::string_view read_name(std::string_view what) {
    skip_space();
    const size_t start = cursor_;
    if (cursor_ >= line_.size() || line_[cursor_] != '%') {
      fail("expected " + std::string(what) + ", got " + next_token());
    }
    ++cursor_;
    while (cursor_ < line_.size() && is_identifier_char(line_[cursor_])) ++cursor_;
    if (cursor_ == start + 1) fail_at(start, "expected a name after '%', got " + next_token());
    return line_.substr(start, cursor_ - start);
  }

  NodePtr read_operand(std::string_view what) {
    const std::string_view name = read_name(what);
    const Definition* definition = find_definition(name);
    if (definition == nullptr) {
      fail_at(cursor_ - name.size(), std::string(name) +
                                         " is not defined; a name must be defined on an earlier "
                                         "line than its uses");
    }
    return result_.graph.nodes[definition->position];
  }

  // ---- Names ----
  //
  // Printed text names nodes %0, %1, ... in order; those are kept in a vector indexed by number,
  // since hashing millions of names dominated the parse time of large dumps. Other names,
  // including numbers out of sequence, go to a hash map. A number is in `numbered_` exactly when
  // it is below numbered_.size(): a definition out of sequence is at or above the size then, and
  // the size only reaches it by defining that name again, which is rejected.

  // The number N of a name %N written without leading zeros, if it is one.
  static std::optional<size_t> number_of(std::string_view name) {
    const std::string_view digits = name.substr(1);
    if (digits.empty() || digits.size() > 18 || (digits[0] == '0' && digits.size() > 1)) {
      return std::nullopt;
    }
    size_t number = 0;
    for (const char c : digits) {
      if (c < '0' || c > '9') return std::nullopt;
      number = number * 10 + static_cast<size_t>(c - '0');
    }
    return number;
  }

  const Definition* find_definition(std::string_view name) const {
    if (const auto number = number_of(name); number && *number < numbered_.size()) {
      return &numbered_[*number];
    }
    const auto found = named_.find(name);
    return found == named_.end() ? nullptr : &found->second;
  }

  void define(std::string_view name, Definition definition) {
    if (number_of(name) == numbered_.size())
      numbered_.push_back(definition);
    else
      named_.emplace(name, definition);
  }

  // ---- Lines ----

  // %name = op(%a, %b) {attributes} : dtype[shape] loc("file":line:column)
  void parse_definition() {
    const std::string_view name = read_name("a node name like %0 or 'return'");
    if (const Definition* previous = find_definition(name)) {
      fail_at(cursor_ - name.size(), std::string(name) + " is defined twice (first on line " +
                                         std::to_string(previous->line) + ")");
    }
    expect('=', "after the node name");
    skip_space();
    const size_t op_column = cursor_;
    const std::string_view op_text = read_identifier("an op name");
    const std::optional<Op> op = op_from_name(op_text);
    if (!op) fail_at(op_column, "unknown op " + quoted(op_text));

    auto node = std::make_shared<Node>();
    node->op = *op;
    expect('(', "after the op name");
    if (!consume(')')) {
      do {
        node->inputs.push_back(read_operand("an operand like %0"));
      } while (consume(','));
      expect(')', "after operands");
    }
    std::array<PendingScalar, 2> scalars;
    parse_attributes(*node, scalars);
    expect(':', "before the type");
    parse_type(*node);
    for (int i = 0; i < 2; ++i) {
      if (!scalars[i].text.empty()) node->params[i] = to_scalar(scalars[i], param_dtype(*node));
    }
    if (peek_identifier() == "loc") {
      cursor_ += 3;
      parse_location(node);
    }
    expect_end("after the node");
    check_type(name, *node);

    define(name, Definition{result_.graph.nodes.size(), line_number_});
    result_.graph.nodes.push_back(std::move(node));
  }

  // {key=value, ...}: exactly the attributes the op takes, in any order.
  void parse_attributes(Node& node, std::array<PendingScalar, 2>& scalars) {
    const std::span<const std::string_view> keys = attribute_keys(node.op);
    std::array<bool, 4> seen{};
    const std::string op(op_name(node.op));
    if (consume('{')) {
      do {
        skip_space();
        const size_t key_column = cursor_;
        const std::string_view key = read_identifier("an attribute name");
        size_t index = 0;
        while (index < keys.size() && keys[index] != key) ++index;
        if (index == keys.size()) {
          std::string valid;
          for (size_t k = 0; k < keys.size(); ++k) valid += (k ? ", " : "") + std::string(keys[k]);
          fail_at(key_column, op + " has no attribute " + quoted(key) +
                                  (keys.empty() ? "; it takes none" : "; it takes " + valid));
        }
        if (seen[index]) fail_at(key_column, "attribute " + quoted(key) + " is given twice");
        seen[index] = true;
        expect('=', "after the attribute name");
        parse_attribute_value(node, key, scalars);
      } while (consume(','));
      expect('}', "after the attributes");
    }
    for (size_t k = 0; k < keys.size(); ++k) {
      if (!seen[k]) fail(op + " needs the attribute " + quoted(keys[k]));
    }
  }

  void parse_attribute_value(Node& node, std::string_view key,
                             std::array<PendingScalar, 2>& scalars) {
    if (const int index = scalar_index(key); index >= 0) {
      skip_space();
      scalars[index].column = cursor_;
      scalars[index].text = read_number_token("a number");
    } else if (key == "seed") {
      node.seed = read_integer<uint64_t>("a seed (an unsigned integer)");
    } else if (key == "sequence") {
      node.set_attributes().collective.sequence =
          read_integer<uint64_t>("a sequence number (an unsigned integer)");
    } else if (key == "ranks") {
      node.set_attributes().collective.ranks = read_integer<int64_t>("a rank count");
    } else if (key == "root") {
      node.set_attributes().collective.root = read_integer<int64_t>("a rank");
    } else if (key == "axes" || key == "perm") {
      node.set_attributes().axes = read_list("to start the list");
    } else if (key == "axis") {
      node.set_attributes().axes = {read_integer<int64_t>("an axis")};
    } else if (key == "starts") {
      node.set_attributes().starts = read_list("to start the list");
    } else if (key == "steps") {
      node.set_attributes().steps = read_list("to start the list");
    } else {  // keepdims
      skip_space();
      const size_t column = cursor_;
      const std::string_view word = read_identifier("true or false");
      if (word != "true" && word != "false") {
        fail_at(column, "expected true or false, got " + quoted(word));
      }
      node.keepdims = word == "true";
    }
  }

  // A scalar attribute read as the node's dtype wants it (see ScalarParam).
  ScalarParam to_scalar(const PendingScalar& scalar, DType dtype) const {
    const char* begin = scalar.text.data();
    const char* end = begin + scalar.text.size();
    const std::string dtype_text = dtype_short_name(dtype);
    if (is_floating(dtype)) {
      double value = 0;
      const auto result = std::from_chars(begin, end, value);
      if (result.ec == std::errc::result_out_of_range && result.ptr == end) {
        fail_at(scalar.column, "the number " + quoted(scalar.text) + " is out of range for the " +
                                   dtype_text +
                                   " node: a double holds magnitudes from 4.9e-324 to 1.8e308 "
                                   "(write inf or 0 beyond them)");
      }
      if (result.ec != std::errc() || result.ptr != end) {
        fail_at(scalar.column,
                "expected a number for the " + dtype_text + " node, got " + quoted(scalar.text));
      }
      return {value, truncate_to_integer(value)};
    }
    int64_t value = 0;
    const auto result = std::from_chars(begin, end, value);
    if (result.ec == std::errc::result_out_of_range && result.ptr == end) {
      fail_at(scalar.column, "the integer " + quoted(scalar.text) + " is out of range for the " +
                                 dtype_text +
                                 " node: values are read as int64, "
                                 "-9223372036854775808..9223372036854775807");
    }
    if (result.ec != std::errc() || result.ptr != end) {
      fail_at(scalar.column,
              "expected an integer for the " + dtype_text + " node, got " + quoted(scalar.text));
    }
    return ScalarParam::of_integer(value);
  }

  // dtype[d0,d1,...]
  void parse_type(Node& node) {
    skip_space();
    const size_t column = cursor_;
    const std::string_view name = read_identifier("a dtype (f32, f64, i32, i64, bool)");
    const std::optional<DType> dtype = dtype_from_short_name(name);
    if (!dtype) {
      fail_at(column, "unknown dtype " + quoted(name) + "; expected f32, f64, i32, i64 or bool");
    }
    node.dtype = *dtype;
    skip_space();
    const size_t shape_column = cursor_;
    node.shape = read_list("after the dtype");
    int64_t size = 1;
    for (int64_t dim : node.shape) {
      if (dim < 0) fail_at(shape_column, "a shape has no negative dimensions");
      if (__builtin_mul_overflow(size, dim, &size)) {
        fail_at(shape_column, "the shape has more elements than an int64 can count");
      }
    }
  }

  // ("file":line:column), after the word `loc`.
  void parse_location(const NodePtr& node) {
    expect('(', "after loc");
    if (!consume('"')) fail("expected a quoted file name, got " + next_token());
    TextLocation location;
    while (true) {
      if (cursor_ >= line_.size()) fail("the file name has no closing '\"'");
      const char c = line_[cursor_++];
      if (c == '"') break;
      if (c != '\\') {
        location.file += c;
        continue;
      }
      if (cursor_ < line_.size() && (line_[cursor_] == '"' || line_[cursor_] == '\\')) {
        location.file += line_[cursor_++];
      } else if (cursor_ < line_.size() && line_[cursor_] == 'x') {
        location.file += static_cast<char>(read_hex_byte());
      } else {
        fail_at(cursor_ - 1, "unknown escape in the file name; use \\\", \\\\ or \\xHH");
      }
    }
    expect(':', "after the file name");
    location.line = read_integer<uint32_t>("a line number");
    expect(':', "after the line number");
    location.column = read_integer<uint32_t>("a column number");
    expect(')', "after the location");
    if (!location.file.empty()) result_.locations.set(node, std::move(location));
  }

  // The HH of \xHH, with the cursor on the 'x'.
  int read_hex_byte() {
    const auto digit = [](char c) {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'a' && c <= 'f') return c - 'a' + 10;
      if (c >= 'A' && c <= 'F') return c - 'A' + 10;
      return -1;
    };
    const int high = cursor_ + 1 < line_.size() ? digit(line_[cursor_ + 1]) : -1;
    const int low = cursor_ + 2 < line_.size() ? digit(line_[cursor_ + 2]) : -1;
    if (high < 0 || low < 0) fail_at(cursor_ - 1, "\\x needs two hex digits");
    cursor_ += 3;
    return high * 16 + low;
  }

  void check_type(std::string_view name, const Node& node) const {
    std::optional<TensorType> inferred;
    try {
      inferred = infer_type(node);
    } catch (const Error& error) {
      fail_line(std::string(name) + ": " + error.what());
    }
    if (inferred->dtype != node.dtype || inferred->shape != node.shape) {
      fail_line(std::string(name) + " (" + std::string(op_name(node.op)) + ") is declared " +
                type_text(node.dtype, node.shape) + " but its inputs give " +
                type_text(inferred->dtype, inferred->shape));
    }
  }

  // return %a, %b, ...
  void parse_return() {
    cursor_ += std::string_view("return").size();
    if (!at_end()) {
      do {
        result_.graph.outputs.push_back(read_operand("an output like %0"));
      } while (consume(','));
    }
    expect_end("after the outputs");
  }

  std::string_view text_;
  std::string_view line_;
  size_t cursor_ = 0;
  int64_t line_number_ = 0;
  std::vector<Definition> numbered_;
  std::unordered_map<std::string_view, Definition> named_;
  ParsedGraph result_;
};

}  // namespace

ParsedGraph parse_graph(std::string_view text) { return Parser(text).parse(); }

}  // namespace lz::ir
