// Fuzzing of the IR parser: mutated printed graphs must either parse into a graph that verifies
// and round-trips through the printer, or be rejected with a "[parse] line L..." lz::Error that
// points inside the text. Deterministic (fixed seeds); a failure prints the input as a C string
// literal to replay with parse_graph.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "lazuli/error.h"
#include "tests/passes/graph_generator.h"

namespace lz::ir {
namespace {

// The text as a C++ string literal (octal escapes, which never swallow a following digit).
std::string escaped(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (byte < 0x20 || byte >= 0x7f) {
      char octal[5];
      std::snprintf(octal, sizeof(octal), "\\%03o", byte);
      out += octal;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// The lines as the parser counts them: split at '\n', a trailing '\r' dropped, and an empty last
// line after a final '\n'.
std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (true) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    if (end == text.size()) return lines;
    start = end + 1;
  }
}

// Reads the decimal number at the front of `text`, advancing past it.
std::optional<size_t> read_number(std::string_view& text) {
  size_t value = 0;
  size_t length = 0;
  while (length < text.size() && length < 12 && text[length] >= '0' && text[length] <= '9') {
    value = value * 10 + static_cast<size_t>(text[length] - '0');
    ++length;
  }
  if (length == 0) return std::nullopt;
  text.remove_prefix(length);
  return value;
}

// Why a parse error's message is malformed: it must be "[parse] line L: ..." or
// "[parse] line L, column C: ..." with L a line of the text and C at most one past its end.
std::optional<std::string> check_error_message(std::string_view text, std::string_view message) {
  std::string_view rest = message;
  if (!rest.starts_with("[parse] line ")) return "the message does not start with '[parse] line '";
  rest.remove_prefix(std::string_view("[parse] line ").size());
  const std::vector<std::string_view> lines = lines_of(text);
  const std::optional<size_t> line = read_number(rest);
  if (!line || *line < 1 || *line > lines.size()) {
    return "the line number is not a line of the " + std::to_string(lines.size()) + "-line text";
  }
  if (rest.starts_with(", column ")) {
    rest.remove_prefix(std::string_view(", column ").size());
    const std::optional<size_t> column = read_number(rest);
    if (!column || *column < 1 || *column > lines[*line - 1].size() + 1) {
      return "the column is not within line " + std::to_string(*line);
    }
  }
  if (!rest.starts_with(": ") || rest.size() <= 2) return "no ': ' and explanation after it";
  return std::nullopt;
}

// What parsing a text gave: accepted or rejected, and what was wrong with that, if anything.
struct ParseCheck {
  bool accepted = false;
  std::optional<std::string> problem;
};

// Parsing either throws a well-formed "[parse]" error or gives a graph that verifies and prints
// to a text that parses and prints the same again; anything else is a problem.
ParseCheck check_parse(std::string_view text) {
  std::optional<ParsedGraph> parsed;
  try {
    parsed = parse_graph(text);
  } catch (const Error& error) {
    if (auto problem = check_error_message(text, error.what())) {
      return {false, "malformed parse error (" + *problem + "): " + error.what()};
    }
    return {false, std::nullopt};
  } catch (const std::exception& error) {
    return {false, std::string("parse_graph threw a non-lz::Error exception: ") + error.what()};
  } catch (...) {
    return {false, "parse_graph threw something that is not a std::exception"};
  }
  try {
    verify(parsed->graph);
  } catch (const std::exception& error) {
    return {true, std::string("the parsed graph does not verify: ") + error.what()};
  }
  const std::string printed = print_graph(parsed->graph, parsed->locations);
  try {
    const ParsedGraph reparsed = parse_graph(printed);
    const std::string reprinted = print_graph(reparsed.graph, reparsed.locations);
    if (reprinted != printed) {
      return {true, "printing the parsed graph is not stable: " + escaped(printed) +
                        " reprints as " + escaped(reprinted)};
    }
  } catch (const std::exception& error) {
    return {true, "the printed graph " + escaped(printed) + " does not parse: " + error.what()};
  }
  return {true, std::nullopt};
}

// Counts how many inputs were accepted and rejected, so that a test can show that its inputs
// exercise both paths.
struct FuzzTally {
  int accepted = 0;
  int rejected = 0;
  int failed = 0;
};

void expect_parses_or_rejects_cleanly(std::string_view text, FuzzTally& tally) {
  const ParseCheck check = check_parse(text);
  ++(check.accepted ? tally.accepted : tally.rejected);
  if (check.problem) {
    ++tally.failed;
    ADD_FAILURE() << *check.problem << "\ninput: " << escaped(text);
  }
}

// Valid text must be accepted and round-trip.
void expect_valid(std::string_view text) {
  const ParseCheck check = check_parse(text);
  EXPECT_TRUE(check.accepted) << escaped(text.substr(0, 300));
  EXPECT_EQ(check.problem, std::nullopt) << escaped(text.substr(0, 300));
}

// ---- Inputs ----

// Valid texts over every attribute, a location with escapes, comments and names other than %N.
const std::vector<std::string>& hand_written_seeds() {
  static const std::vector<std::string> seeds = {
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
      "return %3, %4, %3\n",
      "%0 = random_uniform() {seed=18446744073709551615, low=-1, high=0.25} : f32[2,2]\n"
      "%1 = argmax(%0) {axes=[1], keepdims=true} : i64[2,1]\n"
      "%2 = arange() {start=-9223372036854775808, step=9223372036854775807} : i64[3]\n"
      "%3 = full() {value=nan} : f64[] loc(\"a \\\"q\\\" \\\\ \\x41.cpp\":4294967295:0)\n"
      "%4 = full() {value=-inf} : f64[2,1]\n"
      "%5 = maximum(%4, %3) : f64[2,1]\n"
      "return %1, %2, %5\n",
      "// a comment line\n"
      "\n"
      "  %x = data() : f32[3]   // trailing comment\r\n"
      "%y = sum(%x) {keepdims=true, axes=[0]} : f32[1]\n"
      "%cond = less(%y, %x) : bool[3]\n"
      "%w = where(%cond, %x, %y) : f32[3]\n"
      "%r = reshape(%w) : f32[1,3,1]\n"
      "%b = broadcast_to(%r) : f32[2,1,3,4]\n"
      "return %b, %x\n",
      "%0 = data() : f32[2,0,3]\n"
      "%1 = sum(%0) {axes=[1], keepdims=false} : f32[2,3]\n"
      "%2 = data() : f32[3,5]\n"
      "%3 = matmul(%1, %2) : f32[2,5]\n"
      "%4 = min(%3) {axes=[], keepdims=false} : f32[2,5]\n"
      "return %4\n",
      "return\n",
  };
  return seeds;
}

// Printed random graphs over every op and dtype.
std::vector<std::string> generated_seeds(int count) {
  std::vector<std::string> seeds;
  for (int seed = 0; seed < count; ++seed) {
    seeds.push_back(print_graph(passes::test::GraphGenerator(seed).generate()));
  }
  return seeds;
}

std::vector<std::string> all_seeds() {
  std::vector<std::string> seeds = hand_written_seeds();
  for (std::string& text : generated_seeds(40)) seeds.push_back(std::move(text));
  return seeds;
}

std::string repeated(std::string_view item, int count, std::string_view separator) {
  std::string out;
  for (int i = 0; i < count; ++i) out += std::string(i ? separator : "") + std::string(item);
  return out;
}

// Splits at spaces.
std::vector<std::string> words_of(std::string_view text) {
  std::vector<std::string> words;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(' ', start);
    if (end == std::string_view::npos) end = text.size();
    words.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return words;
}

// Tokens the mutator inserts or swaps in, by what they replace.
struct Dictionary {
  std::vector<std::string> names = words_of(
      "%0 %1 %2 %3 %9 %99 %x % %00 %-1 %999999999999999999999 "
      "%18446744073709551616");
  std::vector<std::string> numbers = words_of(
      "0 1 -1 2 3 7 99999999999999999999 -99999999999999999999 "
      "9223372036854775807 -9223372036854775808 9223372036854775808 "
      "18446744073709551615 18446744073709551616 4294967295 4294967296 1e308 "
      "1e309 -1e999 1e-400 -0 0.5 nan -nan inf -inf infinity 0x10 +1 1. . - "
      "1e 00");
  // Ops, dtypes, attribute names and keywords, right and wrong.
  std::vector<std::string> words = words_of(
      "data full arange random_uniform add neg sum argmax transpose "
      "concatenate slice reshape broadcast_to where matmul astype frobnicate "
      "Data return loc f32 f64 i32 i64 bool f16 u8 float32 value start step "
      "seed low high mean std axes keepdims perm axis starts steps bogus "
      "true false");
  std::vector<std::string> pieces = {
      "(",
      ")",
      "{",
      "}",
      "[",
      "]",
      "=",
      ":",
      ",",
      "%",
      "\"",
      "\\",
      "//",
      "\n",
      "\r",
      "\t",
      " ",
      std::string(1, '\0'),
      "\xff",
      "[]",
      "[0]",
      "[-1]",
      "[,]",
      "[1,]",
      "[[1]]",
      "[99999999999999999999]",
      "[" + repeated("1", 64, ",") + "]",
      "[" + repeated("2", 64, ",") + "]",
      "[" + repeated("1", 5000, ",") + "]",
      "[" + repeated("0", 3, ",") + "," + repeated("4294967296", 8, ",") + "]",
      " loc(\"f.cpp\":1:2)",
      " loc(\"\\x\":1:2)",
      " loc(\"\\x4",
      " loc(\"f.cpp\":4294967296:2)",
      "{value=1}",
      "{axes=[0], keepdims=false}",
      "{perm=[1,0]}",
      "{axis=5}",
      "{starts=[0], steps=[0]}",
      " {seed=1, low=0, high=1}",
      "keepdims=true",
      "axes=[0,0]",
      "axes=[1,0]",
      "\nreturn %0\n",
      "%0 = data() : f32[2]\n",
  };
};

enum class TokenKind { Name, Number, Word, Piece };

struct Token {
  size_t begin;
  size_t size;
  TokenKind kind;
};

bool is_word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '-' || c == '+';
}

// The text's tokens as the parser would see them: %names, runs of word/number characters, and
// single other characters (spaces skipped).
std::vector<Token> tokens_of(std::string_view text) {
  std::vector<Token> tokens;
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == ' ') {
      ++i;
      continue;
    }
    size_t end = i + 1;
    TokenKind kind = TokenKind::Piece;
    if (c == '%' || is_word_char(c)) {
      while (end < text.size() && is_word_char(text[end])) ++end;
      if (c == '%')
        kind = TokenKind::Name;
      else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_')
        kind = TokenKind::Word;
      else
        kind = TokenKind::Number;
    }
    tokens.push_back({i, end - i, kind});
    i = end;
  }
  return tokens;
}

// Random edits of a text: bytes, spans, lines and tokens, from a fixed seed.
class TextMutator {
 public:
  explicit TextMutator(uint64_t seed) : random_(seed) {}

  /// `text` with one random edit, or sometimes two or three.
  std::string mutate(std::string text) {
    const int edits = uniform(0, 9) < 7 ? 1 : uniform(2, 3);
    for (int i = 0; i < edits; ++i) edit(text);
    return text;
  }

 private:
  size_t uniform(size_t low, size_t high) {
    return std::uniform_int_distribution<size_t>(low, high)(random_);
  }
  int uniform(int low, int high) { return std::uniform_int_distribution<int>(low, high)(random_); }
  const std::string& one_of(const std::vector<std::string>& choices) {
    return choices[uniform(size_t{0}, choices.size() - 1)];
  }

  // A span [begin, begin + size) of the text, at most `max_size` long.
  std::pair<size_t, size_t> span(const std::string& text, size_t max_size) {
    const size_t begin = uniform(size_t{0}, text.size());
    const size_t size = uniform(size_t{0}, std::min(max_size, text.size() - begin));
    return {begin, size};
  }

  // The [begin, end) byte ranges of the lines, each with its '\n'.
  static std::vector<std::pair<size_t, size_t>> line_ranges(const std::string& text) {
    std::vector<std::pair<size_t, size_t>> ranges;
    size_t start = 0;
    while (start < text.size()) {
      size_t end = text.find('\n', start);
      end = end == std::string::npos ? text.size() : end + 1;
      ranges.emplace_back(start, end);
      start = end;
    }
    return ranges;
  }

  void edit(std::string& text) {
    switch (uniform(0, 9)) {
      case 0: {  // flip bits of a byte
        if (text.empty()) break;
        text[uniform(size_t{0}, text.size() - 1)] ^= static_cast<char>(uniform(1, 255));
        break;
      }
      case 1: {  // delete a span
        const auto [begin, size] = span(text, 16);
        text.erase(begin, size);
        break;
      }
      case 2: {  // duplicate a span in place
        const auto [begin, size] = span(text, 32);
        text.insert(begin, text.substr(begin, size));
        break;
      }
      case 3: {  // swap two spans of equal size
        const auto [first, size] = span(text, 12);
        const size_t second = uniform(size_t{0}, text.size() - size);
        const std::string a = text.substr(first, size);
        const std::string b = text.substr(second, size);
        text.replace(first, size, b);
        text.replace(second, size, a);
        break;
      }
      case 4: {  // truncate
        text.resize(uniform(size_t{0}, text.size()));
        break;
      }
      case 5: {  // delete, duplicate or swap lines: names used before, or twice, or never defined
        const auto lines = line_ranges(text);
        if (lines.size() < 2) break;
        const auto [begin, end] = lines[uniform(size_t{0}, lines.size() - 2)];
        const std::string line = text.substr(begin, end - begin);
        const int how = uniform(0, 2);
        if (how == 0) {
          text.erase(begin, end - begin);
        } else if (how == 1) {
          text.insert(lines[uniform(size_t{0}, lines.size() - 1)].first, line);
        } else {
          const auto [next_begin, next_end] = lines[uniform(size_t{0}, lines.size() - 1)];
          if (next_begin <= begin) break;
          const std::string next = text.substr(next_begin, next_end - next_begin);
          text.replace(next_begin, next_end - next_begin, line);
          text.replace(begin, end - begin, next);
        }
        break;
      }
      case 6: {  // insert a token anywhere
        const std::vector<std::string>* lists[] = {&dictionary_.names, &dictionary_.numbers,
                                                   &dictionary_.words, &dictionary_.pieces};
        text.insert(uniform(size_t{0}, text.size()), one_of(*lists[uniform(0, 3)]));
        break;
      }
      default: {  // replace a token, mostly by one of its kind
        const std::vector<Token> tokens = tokens_of(text);
        if (tokens.empty()) break;
        const Token& token = tokens[uniform(size_t{0}, tokens.size() - 1)];
        const TokenKind kind =
            uniform(0, 3) == 0 ? static_cast<TokenKind>(uniform(0, 3)) : token.kind;
        const std::vector<std::string>& replacements =
            kind == TokenKind::Name     ? dictionary_.names
            : kind == TokenKind::Number ? dictionary_.numbers
            : kind == TokenKind::Word   ? dictionary_.words
                                        : dictionary_.pieces;
        text.replace(token.begin, token.size, one_of(replacements));
        break;
      }
    }
  }

  std::mt19937_64 random_;
  Dictionary dictionary_;
};

// ---- Tests ----

TEST(ParserFuzzTest, SeedTextsRoundTripExactly) {
  // The generated seeds are printer output, so they must read back to the same text; this also
  // shows that the fuzzed inputs start out valid.
  for (const std::string& text : generated_seeds(40)) {
    const ParsedGraph parsed = parse_graph(text);
    verify(parsed.graph);
    EXPECT_EQ(print_graph(parsed.graph, parsed.locations), text);
  }
  for (const std::string& text : hand_written_seeds()) {
    expect_valid(text);
  }
}

TEST(ParserFuzzTest, MutatedTextsParseToVerifiedGraphsOrFailWithParseErrors) {
  const std::vector<std::string> seeds = all_seeds();
  TextMutator mutator(20260412);
  FuzzTally tally;
  constexpr int kMutationsPerSeed = 120;
  for (const std::string& seed : seeds) {
    for (int i = 0; i < kMutationsPerSeed && tally.failed < 10; ++i) {
      expect_parses_or_rejects_cleanly(mutator.mutate(seed), tally);
    }
  }
  // Both outcomes must be common, or the mutations test only one of them.
  const int total = static_cast<int>(seeds.size()) * kMutationsPerSeed;
  EXPECT_GT(tally.accepted, total / 50) << tally.accepted << " of " << total << " accepted";
  EXPECT_GT(tally.rejected, total / 4) << tally.rejected << " of " << total << " rejected";
}

TEST(ParserFuzzTest, EveryPrefixWithoutTheReturnLineIsRejected) {
  std::vector<std::string> seeds = hand_written_seeds();
  for (std::string& text : generated_seeds(6)) seeds.push_back(std::move(text));
  FuzzTally tally;
  for (const std::string& text : seeds) {
    const size_t return_line = text.starts_with("return") ? 0 : text.find("\nreturn") + 1;
    for (size_t size = 0; size <= text.size() && tally.failed < 10; ++size) {
      const std::string prefix = text.substr(0, size);
      expect_parses_or_rejects_cleanly(prefix, tally);
      if (size < return_line + std::string_view("return").size()) {
        EXPECT_THROW(parse_graph(prefix), Error) << escaped(prefix);
      }
    }
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

struct MalformedCase {
  std::string text;
  std::string message;  // expected at the start of the error
};

TEST(ParserFuzzTest, MalformedInputsGiveTheExpectedErrors) {
  const MalformedCase cases[] = {
      {"", "[parse] line 1: the text ends without a 'return' line listing the outputs"},
      {"%0 = data() : f32[99999999999999999999]\nreturn %0\n",
       "[parse] line 1, column 19: an integer '99999999999999999999' is out of range"},
      {"%0 = data() : f32[2,-1]\nreturn %0\n",
       "[parse] line 1, column 18: a shape has no negative dimensions"},
      {"%0 = data() : f32[nan]\nreturn %0\n",
       "[parse] line 1, column 19: expected an integer, got 'nan'"},
      {"%0 = data() : f32[1,]\nreturn %0\n",
       "[parse] line 1, column 21: expected an integer, got ']'"},
      {"%0 = data() : f32[" + repeated("65536", 4, ",") + "]\nreturn %0\n",
       "[parse] line 1, column 18: the shape has more elements than an int64 can count"},
      {"%0 = data() : f32[4294967296]\n%1 = data() : f32[4294967296,1]\n"
       "%2 = add(%0, %1) : f32[2]\nreturn %2\n",
       "[parse] line 3: %2: [add] shape (4294967296,4294967296) has more than 2^60 elements"},
      {"%0 = random_uniform() {seed=18446744073709551616, low=0, high=1} : f32[]\nreturn %0\n",
       "[parse] line 1, column 29: a seed (an unsigned integer) '18446744073709551616' is out of "
       "range"},
      {"%0 = random_uniform() {seed=inf, low=0, high=1} : f32[]\nreturn %0\n",
       "[parse] line 1, column 29: expected a seed (an unsigned integer), got 'inf'"},
      {"%0 = data() : f32[2] loc(\"a.cpp\":4294967296:1)\nreturn %0\n",
       "[parse] line 1, column 34: a line number '4294967296' is out of range"},
      {"%0 = data() : f32[2]\n%0 = neg(%0) : f32[2]\nreturn %0\n",
       "[parse] line 2, column 1: %0 is defined twice (first on line 1)"},
      {"%1 = neg(%0) : f32[2]\n%0 = data() : f32[2]\nreturn %1\n",
       "[parse] line 1, column 10: %0 is not defined; a name must be defined on an earlier line"},
      {"%0 = data() : f32[2]\nreturn %0, %1\n", "[parse] line 2, column 12: %1 is not defined"},
      {"%0 = data() : f32[2]\n%1 = add(%0, %0\nreturn %1\n",
       "[parse] line 2, column 16: expected ')' after operands, got end of line"},
      {"%0 = Data() : f32[2]\nreturn %0\n", "[parse] line 1, column 6: unknown op 'Data'"},
      {"%0 = data() : float32[2]\nreturn %0\n",
       "[parse] line 1, column 15: unknown dtype 'float32'; expected f32, f64, i32, i64 or bool"},
      {"%0 = full() {value=1, seed=3} : f32[]\nreturn %0\n",
       "[parse] line 1, column 23: full has no attribute 'seed'; it takes value"},
      {"%0 = data() {value=1} : f32[]\nreturn %0\n",
       "[parse] line 1, column 14: data has no attribute 'value'; it takes none"},
      {"%0 = data() : f32[2]\n%1 = sum(%0) {axes=[0], axes=[0], keepdims=true} : f32[1]\n"
       "return %1\n",
       "[parse] line 2, column 25: attribute 'axes' is given twice"},
      {"%0 = data() : f32[2]\n%1 = sum(%0) {axes=[1], keepdims=false} : f32[]\nreturn %1\n",
       "[parse] line 2: %1: [sum] axis 1 is out of range for shape (2)"},
      {"%0 = data() : f32[2]\n%1 = sum(%0) {axes=[-1], keepdims=false} : f32[]\nreturn %1\n",
       "[parse] line 2: %1: [sum] axis -1 is out of range for shape (2)"},
      {"%0 = data() : f32[2,3]\n%1 = sum(%0) {axes=[1,0], keepdims=false} : f32[]\nreturn %1\n",
       "[parse] line 2: %1: [sum] axes [1,0] must be strictly ascending"},
      {"%0 = data() : f32[2,3]\n%1 = transpose(%0) {perm=[0,0]} : f32[2,2]\nreturn %1\n",
       "[parse] line 2: %1: [transpose] permutation [0,0] of shape (2,3) must list each axis"},
      {"%0 = data() : f32[2]\n%1 = concatenate(%0) {axis=9223372036854775807} : f32[2]\n"
       "return %1\n",
       "[parse] line 2: %1: [concatenate] axis [9223372036854775807] is not a single axis"},
      {"%0 = data() : f32[4]\n%1 = slice(%0) {starts=[0], steps=[9223372036854775807]} : f32[3]\n"
       "return %1\n",
       "[parse] line 2: %1: [slice] axis 0 reads indices"},
      {"%0 = random_normal() {seed=1, mean=0, std=nan} : f32[2]\nreturn %0\n",
       "[parse] line 1: %0: [random_normal] standard deviation must be >= 0"},
      // Scalars out of range were reported as "expected a number, got '1e999'".
      {"%0 = full() {value=1e999} : f32[]\nreturn %0\n",
       "[parse] line 1, column 20: the number '1e999' is out of range for the f32 node"},
      {"%0 = random_normal() {seed=1, mean=-1e-400, std=1} : f32[]\nreturn %0\n",
       "[parse] line 1, column 36: the number '-1e-400' is out of range for the f64 node: a "
       "double holds magnitudes from 4.9e-324 to 1.8e308"},
      {"%0 = full() {value=99999999999999999999} : i64[]\nreturn %0\n",
       "[parse] line 1, column 20: the integer '99999999999999999999' is out of range for the i64 "
       "node"},
      // An integer fill value beyond its dtype was accepted, and wrapped in the kernels only.
      {"%0 = full() {value=99999999999} : i32[]\nreturn %0\n",
       "[parse] line 1: %0: [full] value 99999999999 does not fit int32, whose values are "
       "-2147483648..2147483647"},
      {"%0 = full() {value=5} : bool[2]\nreturn %0\n",
       "[parse] line 1: %0: [full] value 5 does not fit bool, whose values are 0..1"},
      {"%0 = data() : f32[2]\nreturn %0\n\nreturn %0\n",
       "[parse] line 4, column 1: expected nothing after the 'return' line, got 'return'"},
      // Control bytes went into the message raw, so that a NUL or '\r' hid the token.
      {"%0 = data() : f32[2]\rreturn %0\n",
       "[parse] line 1, column 21: expected end of line after the node, got '\\x0d'"},
      {std::string("%0 = data() : f32[2]\0\nreturn %0\n", 32),
       "[parse] line 1, column 21: expected end of line after the node, got '\\x00'"},
  };
  for (const MalformedCase& test_case : cases) {
    const std::string message = parse_error(test_case.text);
    EXPECT_TRUE(message.starts_with(test_case.message))
        << "input: " << escaped(test_case.text) << "\nerror: " << message
        << "\nexpected it to start with: " << test_case.message;
    EXPECT_EQ(check_error_message(test_case.text, message), std::nullopt) << message;
  }
}

TEST(ParserFuzzTest, ExtremeButValidInputsParseAndRoundTrip) {
  const std::string deep_shape = "[" + repeated("1", 100000, ",") + "]";
  const std::string texts[] = {
      // A 100000-d tensor of one element, and ops over it.
      "%0 = data() : f32" + deep_shape + "\n%1 = neg(%0) : f32" + deep_shape + "\nreturn %1\n",
      // Huge dimensions next to a zero one describe no elements.
      "%0 = data() : f32[0,4611686018427387904,4611686018427387904]\n"
      "%1 = reshape(%0) : f32[9223372036854775807,0]\nreturn %1\n",
      // Extreme scalars and locations.
      "%0 = full() {value=-9223372036854775808} : i64[]\n"
      "%1 = full() {value=1e308} : f32[] loc(\"\\x00\\xff\":4294967295:4294967295)\n"
      "%2 = random_uniform() {seed=0, low=-inf, high=nan} : i32[]\n"
      "return %0, %1, %2, %2\n",
      // A long chain with names other than numbers.
      "%x = data() : f32[]\n" +
          [] {
            std::string chain;
            for (int i = 0; i < 2000; ++i) {
              chain += "%n" + std::to_string(i) + " = neg(" +
                       (i ? "%n" + std::to_string(i - 1) : "%x") + ") : f32[]\n";
            }
            return chain + "return %n1999\n";
          }(),
  };
  for (const std::string& text : texts) {
    expect_valid(text);
  }
}

}  // namespace
}  // namespace lz::ir
