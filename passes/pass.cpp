#include "passes/pass.h"

#include "ir/printer.h"
#include "lazuli/error.h"
#include "passes/fusion_plan.h"
#include "passes/memory_plan.h"
#include "passes/schedule.h"

namespace lz::passes {

PassContext::PassContext(ir::Graph graph, PassOptions options)
    : graph(std::move(graph)), options(options) {}
PassContext::~PassContext() = default;
PassContext::PassContext(PassContext&&) noexcept = default;
PassContext& PassContext::operator=(PassContext&&) noexcept = default;

std::unique_ptr<Pass> make_pass(std::string_view name) {
  if (name == "dce") return make_dead_code_elimination();
  if (name == "cse") return make_common_subexpression_elimination();
  if (name == "simplify") return make_simplification();
  if (name == "fuse") return make_fusion();
  if (name == "schedule") return make_scheduling();
  if (name == "memplan") return make_memory_planning();
  throw Error("[passes] unknown pass '" + std::string(name) +
              "'; the passes are dce, cse, simplify, fuse, schedule, memplan");
}

std::string print_context(const PassContext& context) {
  std::string text = ir::print_graph(context.graph);
  if (context.fusion) text += "\n" + print_fusion_plan(*context.fusion, context.graph);
  if (context.schedule) text += "\n" + print_schedule(*context.schedule);
  if (context.memory) text += "\n" + print_memory_plan(*context.memory, context.graph);
  return text;
}

}  // namespace lz::passes
