// Before fusion_plan.h, which names ir::Graph without including it.
#include "ir/graph.h"

#include "plan/fusion_plan.h"

#include <unordered_map>

#include "ir/printer.h"

namespace lz::plan {
namespace {

class PlanPrinter {
 public:
  explicit PlanPrinter(const ir::Graph& graph) : positions_(graph.index()) {}

  void name(std::string& out, const ir::NodePtr& node) const {
    const auto found = positions_.find(node.get());
    out += found == positions_.end() ? "%?" : "%" + std::to_string(found->second);
  }

  void names(std::string& out, const std::vector<ir::NodePtr>& nodes) const {
    if (nodes.empty()) out += " none";
    for (const ir::NodePtr& node : nodes) {
      out += ' ';
      name(out, node);
    }
  }

  // One node as print_graph writes it, without the location (the graph dump has those).
  void node_line(std::string& out, const ir::NodePtr& node) const {
    out += "  ";
    name(out, node);
    out += " = ";
    out += ir::op_name(node->op);
    out += '(';
    for (size_t k = 0; k < node->inputs.size(); ++k) {
      if (k > 0) out += ", ";
      name(out, node->inputs[k]);
    }
    out += ')';
    const std::string attributes = ir::attributes_text(*node);
    if (!attributes.empty()) out += " " + attributes;
    out += " : " + ir::type_text(node->dtype, node->shape) + "\n";
  }

 private:
  std::unordered_map<const ir::Node*, int64_t> positions_;
};

}  // namespace

std::string print_fusion_plan(const FusionPlan& plan, const ir::Graph& graph) {
  const PlanPrinter printer(graph);

  // Each refusal is printed after the kernel computing its producer, where the value leaves.
  std::unordered_map<const ir::Node*, size_t> kernel_of;
  for (size_t k = 0; k < plan.kernels.size(); ++k) {
    for (const ir::NodePtr& node : plan.kernels[k].nodes) kernel_of.emplace(node.get(), k);
  }
  std::vector<std::vector<const FusionRefusal*>> refusals_after(plan.kernels.size());
  std::vector<const FusionRefusal*> unplaced;
  for (const FusionRefusal& refusal : plan.refusals) {
    const auto found = kernel_of.find(refusal.producer.get());
    if (found == kernel_of.end()) {
      unplaced.push_back(&refusal);
    } else {
      refusals_after[found->second].push_back(&refusal);
    }
  }
  const auto refusal_line = [&](std::string& out, const FusionRefusal& refusal) {
    out += "  # not fused: ";
    printer.name(out, refusal.producer);
    out += " -> ";
    printer.name(out, refusal.consumer);
    out += ": " + refusal.reason + "\n";
  };

  std::string out;
  for (size_t k = 0; k < plan.kernels.size(); ++k) {
    const Kernel& kernel = plan.kernels[k];
    out += "kernel " + std::to_string(kernel.id) + " (" + std::to_string(kernel.nodes.size()) +
           (kernel.nodes.size() == 1 ? " op" : " ops") + ", inputs";
    printer.names(out, kernel.inputs);
    out += ", outputs";
    printer.names(out, kernel.outputs);
    out += "):\n";
    for (const ir::NodePtr& node : kernel.nodes) printer.node_line(out, node);
    for (const FusionRefusal* refusal : refusals_after[k]) refusal_line(out, *refusal);
  }
  // A refusal whose producer is in no kernel (a malformed plan) still shows.
  for (const FusionRefusal* refusal : unplaced) refusal_line(out, *refusal);
  return out;
}

}  // namespace lz::plan
