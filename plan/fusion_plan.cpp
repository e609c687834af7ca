// Before fusion_plan.h, which names ir::Graph without including it.
#include "ir/graph.h"

#include "plan/fusion_plan.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "ir/printer.h"
#include "lazuli/error.h"

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
  ir::NodePositions positions_;
};

}  // namespace

bool swaps_last_two_axes(const ir::Node& node) {
  if (node.op != ir::Op::Transpose || node.axes().size() < 2) return false;
  const int64_t rank = static_cast<int64_t>(node.axes().size());
  for (int64_t d = 0; d < rank - 2; ++d) {
    if (node.axes()[d] != d) return false;
  }
  return node.axes()[rank - 2] == rank - 1 && node.axes()[rank - 1] == rank - 2;
}

bool is_matmul_kernel(const Kernel& kernel) {
  if (kernel.nodes.empty() || kernel.nodes.back()->op != ir::Op::MatMul) return false;
  const ir::Node& matmul = *kernel.nodes.back();
  if (kernel.outputs.size() != 1 || kernel.outputs[0].get() != &matmul) return false;
  for (size_t i = 0; i + 1 < kernel.nodes.size(); ++i) {
    const ir::Node* node = kernel.nodes[i].get();
    const bool operand = matmul.inputs[0].get() == node || matmul.inputs[1].get() == node;
    if (!operand || !swaps_last_two_axes(*node)) return false;
  }
  return true;
}

bool reads_index_aligned(const Kernel& kernel, const ir::Node& input) {
  std::unordered_set<const ir::Node*> dependent{&input};
  for (const ir::NodePtr& node : kernel.nodes) {
    const bool depends =
        std::any_of(node->inputs.begin(), node->inputs.end(),
                    [&](const ir::NodePtr& in) { return dependent.count(in.get()) != 0; });
    if (!depends) continue;
    const ir::OpKind kind = ir::op_info(node->op).kind;
    const bool elementwise = kind == ir::OpKind::Unary || kind == ir::OpKind::Binary ||
                             kind == ir::OpKind::Ternary || node->op == ir::Op::Reshape ||
                             node->op == ir::Op::BroadcastTo;
    // Equal element counts make broadcasting (and reshape) the identity on linear indices.
    if (!elementwise || node->size() != input.size()) return false;
    dependent.insert(node.get());
  }
  return true;
}

bool is_collective_kernel(const Kernel& kernel) {
  return kernel.nodes.size() == 1 && ir::is_collective(kernel.nodes.back()->op);
}

MatmulOperand matmul_operand(const Kernel& kernel, int i) {
  const ir::Node* operand = kernel.nodes.back()->inputs[i].get();
  const auto input_position = [&](const ir::Node* stored) {
    for (size_t j = 0; j < kernel.inputs.size(); ++j) {
      if (kernel.inputs[j].get() == stored) return static_cast<int>(j);
    }
    throw Error("internal: a matmul operand is not an input of its kernel");
  };
  for (size_t n = 0; n + 1 < kernel.nodes.size(); ++n) {
    if (kernel.nodes[n].get() == operand) return {input_position(operand->inputs[0].get()), true};
  }
  return {input_position(operand), false};
}

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
    if (kernel.epilogue >= 0) {
      out += "  # epilogue: kernel " + std::to_string(kernel.epilogue) +
             ", run on each block of the product's rows while they are in cache\n";
    }
    for (const FusionRefusal* refusal : refusals_after[k]) refusal_line(out, *refusal);
  }
  // A refusal whose producer is in no kernel (a malformed plan) still shows.
  for (const FusionRefusal* refusal : unplaced) refusal_line(out, *refusal);
  return out;
}

}  // namespace lz::plan
