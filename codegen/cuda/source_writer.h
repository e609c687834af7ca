// Generated source text, written line by line with the indentation of its blocks.
#pragma once

#include <string>
#include <utility>

namespace lz::codegen::cuda {

class SourceWriter {
 public:
  void line(const std::string& code) {
    text_.append(2 * static_cast<size_t>(indent_), ' ');
    text_ += code;
    text_ += '\n';
  }
  /// Writes `code {` and indents what follows up to the matching close().
  void open(const std::string& code) {
    line(code + " {");
    ++indent_;
  }
  void close() {
    --indent_;
    line("}");
  }
  /// The text so far, leaving the writer empty.
  std::string take() { return std::exchange(text_, {}); }

 private:
  std::string text_;
  int indent_ = 0;
};

}  // namespace lz::codegen::cuda
