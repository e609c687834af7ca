#include "plan/memory_plan.h"

#include <string>

#include "ir/graph.h"

namespace lz::plan {

std::string print_memory_plan(const MemoryPlan& plan, const ir::Graph& graph) {
  const auto positions = graph.index();
  std::string text;
  for (const auto& assignment : plan.assignments) {
    const auto found = positions.find(assignment.value.get());
    text += found == positions.end() ? "%?" : "%" + std::to_string(found->second);
    text += " -> buffer " + std::to_string(assignment.buffer);
    if (assignment.buffer >= 0 && assignment.buffer < static_cast<int>(plan.buffer_bytes.size())) {
      text += " (" + std::to_string(plan.buffer_bytes[assignment.buffer]) + " bytes)";
    }
    if (assignment.in_place) text += " in place";
    text += "\n";
  }
  const size_t buffers = plan.buffer_bytes.size();
  text += "planned: " + std::to_string(buffers) + (buffers == 1 ? " buffer, " : " buffers, ") +
          std::to_string(plan.planned_bytes) +
          " bytes (unplanned: " + std::to_string(plan.unplanned_bytes) + " bytes)\n";
  return text;
}

}  // namespace lz::plan
