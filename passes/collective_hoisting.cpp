#include "passes/collective_hoisting.h"

#include <algorithm>
#include <unordered_map>
#include <utility>
#include <vector>

namespace lz::passes {

void hoist_collectives(plan::FusionPlan& plan) {
  const auto is_collective = [](const plan::Kernel& kernel) {
    return kernel.nodes.size() == 1 && ir::is_collective(kernel.nodes.back()->op);
  };
  if (std::none_of(plan.kernels.begin(), plan.kernels.end(), is_collective)) return;

  std::vector<plan::Kernel> ordered;
  ordered.reserve(plan.kernels.size());
  std::unordered_map<const ir::Node*, size_t> computed_by;  // output -> index in `ordered`
  size_t earliest = 0;                                      // just after the last collective placed
  for (plan::Kernel& kernel : plan.kernels) {
    size_t place = ordered.size();
    if (is_collective(kernel)) {
      place = earliest;
      for (const ir::NodePtr& input : kernel.inputs) {
        if (const auto found = computed_by.find(input.get()); found != computed_by.end()) {
          place = std::max(place, found->second + 1);
        }
      }
      earliest = place + 1;
    }
    ordered.insert(ordered.begin() + static_cast<std::ptrdiff_t>(place), std::move(kernel));
    for (size_t i = place; i < ordered.size(); ++i) {
      for (const ir::NodePtr& output : ordered[i].outputs) computed_by[output.get()] = i;
    }
  }
  for (size_t i = 0; i < ordered.size(); ++i) ordered[i].id = static_cast<int>(i);
  plan.kernels = std::move(ordered);
}

}  // namespace lz::passes
