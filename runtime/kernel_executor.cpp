#include "runtime/kernel_executor.h"

#include <numeric>
#include <unordered_map>

#include "ir/printer.h"
#include "lazuli/error.h"
#include "passes/fusion_plan.h"
#include "passes/schedule.h"
#include "runtime/interpreter.h"
#include "runtime/statistics.h"

namespace lz::runtime {
namespace {

using BufferPtr = std::shared_ptr<Buffer>;

/// Without fusion every computed node is a kernel of its own.
passes::FusionPlan one_kernel_per_node(const ir::Graph& graph) {
  passes::FusionPlan plan;
  for (const ir::NodePtr& node : graph.nodes) {
    if (node->is_evaluated()) continue;
    passes::Kernel kernel;
    kernel.id = static_cast<int>(plan.kernels.size());
    kernel.nodes = {node};
    kernel.inputs = node->inputs;
    kernel.outputs = {node};
    plan.kernels.push_back(std::move(kernel));
  }
  return plan;
}

/// Interprets one node; running out of memory becomes an lz::Error naming the op and the line
/// of the user's code that recorded it.
BufferPtr compute(const ir::Node& node, std::span<const Buffer* const> inputs) {
  try {
    return interpret_node(node, inputs);
  } catch (const std::bad_alloc&) {
    const auto bytes = static_cast<long long>(node.size()) * dtype_size(node.dtype);
    throw Error("[" + std::string(ir::op_name(node.op)) + "] recorded at " +
                node.location.file_name() + ":" + std::to_string(node.location.line()) +
                ": out of memory computing " + ir::type_text(node.dtype, node.shape) + " (" +
                std::to_string(bytes) + " bytes)");
  }
}

}  // namespace

std::vector<BufferPtr> execute(const passes::PassContext& context) {
  const ir::Graph& graph = context.graph;
  const passes::FusionPlan unfused =
      context.fusion ? passes::FusionPlan{} : one_kernel_per_node(graph);
  const std::vector<passes::Kernel>& kernels =
      context.fusion ? context.fusion->kernels : unfused.kernels;

  std::vector<int> order(kernels.size());
  if (context.schedule && context.fusion) {
    order = context.schedule->order;
  } else {
    std::iota(order.begin(), order.end(), 0);
  }

  // Values written out by kernels, freed once the last kernel reading them has run (graph
  // outputs are read once more at the end, so they stay).
  std::unordered_map<const ir::Node*, BufferPtr> written;
  std::unordered_map<const ir::Node*, int> reads_left;
  for (const passes::Kernel& kernel : kernels) {
    for (const ir::NodePtr& input : kernel.inputs) ++reads_left[input.get()];
  }
  for (const ir::NodePtr& output : graph.outputs) ++reads_left[output.get()];

  const auto buffer_of = [&](const ir::Node* node,
                             const std::unordered_map<const ir::Node*, BufferPtr>& local) {
    if (node->is_evaluated()) return node->buffer.get();
    if (auto found = local.find(node); found != local.end()) return found->second.get();
    return written.at(node).get();
  };

  for (int id : order) {
    const passes::Kernel& kernel = kernels[id];
    std::unordered_map<const ir::Node*, BufferPtr> local;
    std::vector<const Buffer*> inputs;
    for (const ir::NodePtr& node : kernel.nodes) {
      inputs.clear();
      for (const ir::NodePtr& input : node->inputs) inputs.push_back(buffer_of(input.get(), local));
      local[node.get()] = compute(*node, inputs);
    }
    for (const ir::NodePtr& output : kernel.outputs) written[output.get()] = local.at(output.get());
    for (const ir::NodePtr& input : kernel.inputs) {
      if (--reads_left[input.get()] == 0) written.erase(input.get());
    }
    counters().kernels_launched.fetch_add(1, std::memory_order_relaxed);
  }

  std::vector<BufferPtr> outputs;
  outputs.reserve(graph.outputs.size());
  for (const ir::NodePtr& output : graph.outputs) {
    outputs.push_back(output->is_evaluated() ? output->buffer : written.at(output.get()));
  }
  return outputs;
}

}  // namespace lz::runtime
