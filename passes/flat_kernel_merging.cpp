#include "passes/flat_kernel_merging.h"

#include <algorithm>
#include <numeric>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "plan/kernel_signature.h"

namespace lz::passes {
namespace {

/// The values `a` and `b` read from outside both.
std::vector<ir::NodePtr> joint_inputs(const plan::Kernel& a, const plan::Kernel& b) {
  std::unordered_set<const ir::Node*> inside;
  for (const plan::Kernel* kernel : {&a, &b}) {
    for (const ir::NodePtr& node : kernel->nodes) inside.insert(node.get());
  }
  std::vector<ir::NodePtr> inputs;
  std::unordered_set<const ir::Node*> listed;
  for (const plan::Kernel* kernel : {&a, &b}) {
    for (const ir::NodePtr& input : kernel->inputs) {
      if (!inside.contains(input.get()) && listed.insert(input.get()).second) {
        inputs.push_back(input);
      }
    }
  }
  return inputs;
}

}  // namespace

void merge_flat_kernels(plan::FusionPlan& plan, const ir::Graph& graph,
                        const PassOptions& options) {
  std::vector<plan::Kernel>& kernels = plan.kernels;
  const size_t count = kernels.size();
  std::unordered_map<const ir::Node*, size_t> producer;  // the kernel computing each node
  for (size_t k = 0; k < count; ++k) {
    for (const ir::NodePtr& node : kernels[k].nodes) producer.emplace(node.get(), k);
  }
  // Kernels stay at their positions: a kernel merged into an earlier one runs in its place.
  std::vector<size_t> merged_into(count);
  std::iota(merged_into.begin(), merged_into.end(), 0);
  std::vector<size_t> targets;  // flat kernels others may still merge into, in order
  bool merged_any = false;
  for (size_t later = 0; later < count; ++later) {
    plan::Kernel& kernel = kernels[later];
    if (!plan::is_flat(kernel)) continue;
    const int64_t size = kernel.nodes.back()->size();
    bool merged = false;
    for (size_t target : targets) {
      plan::Kernel& earlier = kernels[target];
      if (earlier.nodes.back()->size() != size || earlier.nodes.size() + kernel.nodes.size() >
                                                      static_cast<size_t>(options.max_kernel_ops)) {
        continue;
      }
      const bool ready =
          std::all_of(kernel.inputs.begin(), kernel.inputs.end(), [&](const ir::NodePtr& input) {
            const auto found = producer.find(input.get());
            return found == producer.end() || merged_into[found->second] <= target;
          });
      if (!ready) continue;
      std::vector<ir::NodePtr> inputs = joint_inputs(earlier, kernel);
      if (inputs.size() > static_cast<size_t>(options.max_kernel_inputs)) continue;
      earlier.inputs = std::move(inputs);
      earlier.nodes.insert(earlier.nodes.end(), kernel.nodes.begin(), kernel.nodes.end());
      earlier.outputs.insert(earlier.outputs.end(), kernel.outputs.begin(), kernel.outputs.end());
      merged_into[later] = target;
      merged = merged_any = true;
      break;
    }
    if (!merged) targets.push_back(later);
  }
  if (!merged_any) return;

  // A merged kernel lists its nodes and inputs in graph order, and writes out only what another
  // kernel reads or the graph returns.
  const ir::NodePositions positions = graph.index();
  auto in_graph_order = [&](std::vector<ir::NodePtr>& nodes) {
    std::sort(nodes.begin(), nodes.end(), [&](const ir::NodePtr& a, const ir::NodePtr& b) {
      return positions.at(a.get()) < positions.at(b.get());
    });
  };
  std::unordered_set<const ir::Node*> read_outside(graph.outputs.size());
  for (const ir::NodePtr& output : graph.outputs) read_outside.insert(output.get());
  for (size_t k = 0; k < count; ++k) {
    if (merged_into[k] != k) continue;
    for (const ir::NodePtr& input : kernels[k].inputs) read_outside.insert(input.get());
  }
  std::vector<plan::Kernel> kept;
  for (size_t k = 0; k < count; ++k) {
    if (merged_into[k] != k) continue;
    plan::Kernel& kernel = kernels[k];
    if (std::count(merged_into.begin(), merged_into.end(), k) > 1) {
      in_graph_order(kernel.nodes);
      in_graph_order(kernel.inputs);
      std::erase_if(kernel.outputs,
                    [&](const ir::NodePtr& node) { return !read_outside.contains(node.get()); });
      in_graph_order(kernel.outputs);
    }
    kernel.id = static_cast<int>(kept.size());
    kept.push_back(std::move(kernel));
  }
  kernels = std::move(kept);
  std::erase_if(plan.refusals, [&](const plan::FusionRefusal& refusal) {
    const auto producer_kernel = producer.find(refusal.producer.get());
    const auto consumer_kernel = producer.find(refusal.consumer.get());
    return producer_kernel != producer.end() && consumer_kernel != producer.end() &&
           merged_into[producer_kernel->second] == merged_into[consumer_kernel->second];
  });
}

}  // namespace lz::passes
