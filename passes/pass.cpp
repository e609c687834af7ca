#include "passes/pass.h"

#include <algorithm>

#include "ir/printer.h"
#include "lazuli/error.h"
#include "plan/fusion_plan.h"
#include "plan/schedule.h"

namespace lz::passes {

PassContext::PassContext(ir::Graph graph, PassOptions options)
    : graph(std::move(graph)), options(options) {}
PassContext::~PassContext() = default;
PassContext::PassContext(PassContext&&) noexcept = default;
PassContext& PassContext::operator=(PassContext&&) noexcept = default;

namespace {

struct NamedPass {
  std::string_view name;
  std::unique_ptr<Pass> (*make)();
};

constexpr NamedPass kPasses[] = {
    {"dce", make_dead_code_elimination}, {"cse", make_common_subexpression_elimination},
    {"simplify", make_simplification},   {"fuse", make_fusion},
    {"schedule", make_scheduling},
};

}  // namespace

std::unique_ptr<Pass> make_pass(std::string_view name) {
  for (const NamedPass& pass : kPasses) {
    if (pass.name == name) return pass.make();
  }
  throw Error("[passes] unknown pass '" + std::string(name) + "'; the passes are " +
              pass_names_text());
}

bool is_pass_name(std::string_view name) {
  return std::any_of(std::begin(kPasses), std::end(kPasses),
                     [&](const NamedPass& pass) { return pass.name == name; });
}

std::string pass_names_text() {
  std::string text;
  for (const NamedPass& pass : kPasses) {
    if (!text.empty()) text += ", ";
    text += pass.name;
  }
  return text;
}

namespace {

/// `text` with every line made an IR comment, so that a printed context parses back as its graph.
std::string as_comment(const std::string& text) {
  std::string commented = "//\n";
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = std::min(text.find('\n', start), text.size());
    commented += "// " + text.substr(start, end - start) + "\n";
    start = end + 1;
  }
  return commented;
}

}  // namespace

std::string print_context(const PassContext& context, const ir::LocationOverrides& locations) {
  std::string text = ir::print_graph(context.graph, locations);
  if (context.fusion) text += as_comment(print_fusion_plan(*context.fusion, context.graph));
  if (context.schedule) text += as_comment(print_schedule(*context.schedule));
  return text;
}

}  // namespace lz::passes
