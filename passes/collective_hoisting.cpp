#include "passes/collective_hoisting.h"

#include <algorithm>
#include <queue>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "lazuli/error.h"

namespace lz::passes {

void hoist_collectives(plan::FusionPlan& plan) {
  const auto is_collective = plan::is_collective_kernel;
  if (std::none_of(plan.kernels.begin(), plan.kernels.end(), is_collective)) return;

  // The kernels' dependencies, and one more per collective: on the collective recorded before
  // it (the graph's order need not be the recording order, which every rank shares).
  const size_t count = plan.kernels.size();
  std::unordered_map<const ir::Node*, size_t> computed_by;
  for (size_t k = 0; k < count; ++k) {
    for (const ir::NodePtr& output : plan.kernels[k].outputs) computed_by[output.get()] = k;
  }
  std::vector<std::vector<size_t>> dependents(count);
  std::vector<int> waiting_for(count, 0);
  const auto depend = [&](size_t before, size_t after) {
    dependents[before].push_back(after);
    ++waiting_for[after];
  };
  std::vector<size_t> collectives;
  for (size_t k = 0; k < count; ++k) {
    for (const ir::NodePtr& input : plan.kernels[k].inputs) {
      if (const auto found = computed_by.find(input.get()); found != computed_by.end()) {
        depend(found->second, k);
      }
    }
    if (is_collective(plan.kernels[k])) collectives.push_back(k);
  }
  std::stable_sort(collectives.begin(), collectives.end(), [&](size_t a, size_t b) {
    return plan.kernels[a].nodes.back()->collective().sequence <
           plan.kernels[b].nodes.back()->collective().sequence;
  });
  for (size_t i = 1; i < collectives.size(); ++i) depend(collectives[i - 1], collectives[i]);

  // Each kernel's urgency: the first collective (in recording order) that needs it, directly or
  // through other kernels. The plan's order is a topological one for the data, so a backward
  // walk sees every kernel's readers first; the edges between collectives may point backwards,
  // which is harmless: a collective's urgency is its own, lower than its successor's.
  const size_t never = collectives.size();
  std::vector<size_t> needed_by(count, never);
  for (size_t i = 0; i < collectives.size(); ++i) needed_by[collectives[i]] = i;
  for (size_t k = count; k-- > 0;) {
    for (size_t dependent : dependents[k]) {
      needed_by[k] = std::min(needed_by[k], needed_by[dependent]);
    }
  }

  // Of the ready kernels, a collective goes first, then what the next collective needs (the
  // gradients of the last layers before those of the first), then the plan's order.
  using Priority = std::tuple<bool, size_t, size_t>;  // (not a collective, urgency, position)
  std::priority_queue<Priority, std::vector<Priority>, std::greater<>> ready;
  const auto make_ready = [&](size_t k) {
    ready.emplace(!is_collective(plan.kernels[k]), needed_by[k], k);
  };
  for (size_t k = 0; k < count; ++k) {
    if (waiting_for[k] == 0) make_ready(k);
  }
  std::vector<plan::Kernel> ordered;
  ordered.reserve(count);
  while (!ready.empty()) {
    const size_t k = std::get<2>(ready.top());
    ready.pop();
    for (size_t dependent : dependents[k]) {
      if (--waiting_for[dependent] == 0) make_ready(dependent);
    }
    ordered.push_back(std::move(plan.kernels[k]));
    ordered.back().id = static_cast<int>(ordered.size() - 1);
  }
  if (ordered.size() != count) {
    // Only hand-written IR gets here: recording numbers collectives in the order of their data.
    throw Error(
        "[fuse] the collectives' sequence numbers contradict their data: a collective "
        "reads the result of one with a higher sequence number");
  }
  plan.kernels = std::move(ordered);
}

}  // namespace lz::passes
