#include "frontend/evaluation.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>

#include "frontend/settings.h"
#include "ir/dot.h"
#include "ir/graph.h"
#include "ir/pending_list.h"
#include "ir/printer.h"
#include "lazuli/error.h"
#include "runtime/interpreter.h"

namespace lz::frontend {
namespace {

// One evaluation at a time: the reference interpreter runs on the calling thread.
std::mutex evaluation_mutex;
uint64_t evaluation_count = 0;       // guarded by evaluation_mutex
EvaluationRecord last_record;        // guarded by evaluation_mutex

std::string location_string(std::source_location loc) {
  // operator<< cannot capture its caller's location; it passes a default-constructed one.
  if (loc.file_name()[0] == '\0') return "operator<<";
  return std::string(loc.file_name()) + ":" + std::to_string(loc.line());
}

/// Whether each node's result must outlive this evaluation: it does when someone outside the
/// graph (a user's Tensor, a pending node not being evaluated now) still holds it. Every other
/// result is an intermediate that the interpreter frees after its last consumer.
std::vector<bool> results_to_keep(const ir::Graph& graph) {
  const auto index = graph.index();
  // References held by the graph itself: its node list, its consumers' inputs, its outputs.
  std::vector<long> internal(graph.nodes.size(), 1);
  for (const ir::NodePtr& node : graph.nodes) {
    for (const ir::NodePtr& input : node->inputs) ++internal[index.at(input.get())];
  }
  for (const ir::NodePtr& output : graph.outputs) ++internal[index.at(output.get())];
  std::vector<bool> keep(graph.nodes.size());
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    keep[i] = graph.nodes[i].use_count() > internal[i];
  }
  return keep;
}

void dump(const std::string& directory, const ir::Graph& graph, const EvaluationRecord& record) {
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  char prefix[32];
  std::snprintf(prefix, sizeof(prefix), "%04llu.", static_cast<unsigned long long>(record.number));
  const std::filesystem::path base =
      std::filesystem::path(directory) / (prefix + std::string(evaluation_reason_name(record.reason)));
  std::ofstream(base.string() + ".lzir") << "# evaluation " << record.number << ": "
                                        << evaluation_reason_name(record.reason) << " at "
                                        << record.location << "\n"
                                        << ir::print_graph(graph);
  std::ofstream(base.string() + ".dot") << ir::graph_to_dot(graph);
  if (error) std::cerr << "[lazuli] cannot create LZ_DUMP directory " << directory << "\n";
}

void run(const ir::Graph& graph, const std::vector<bool>& keep, EvaluationReason reason,
         std::source_location loc) {
  const auto start = std::chrono::steady_clock::now();
  const Settings settings = current_settings();
  EvaluationRecord record;
  record.number = ++evaluation_count;
  record.reason = reason;
  record.location = location_string(loc);
  for (const ir::NodePtr& node : graph.nodes) record.nodes += node->is_evaluated() ? 0 : 1;
  if (!settings.dump_directory.empty()) dump(settings.dump_directory, graph, record);

  std::vector<std::shared_ptr<runtime::Buffer>> results = runtime::interpret(graph, keep);
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    ir::Node& node = *graph.nodes[i];
    if (!keep[i] || node.is_evaluated()) continue;
    ir::PendingList::global().remove(&node);
    node.become_data(std::move(results[i]));
  }

  record.milliseconds =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (settings.log_level != LogLevel::Off) {
    std::fprintf(stderr, "[lazuli] evaluation %llu: %s at %s, %lld nodes, %.3f ms\n",
                 static_cast<unsigned long long>(record.number), evaluation_reason_name(reason),
                 record.location.c_str(), static_cast<long long>(record.nodes),
                 record.milliseconds);
  }
  last_record = std::move(record);
}

}  // namespace

void evaluate(std::vector<ir::NodePtr> roots, EvaluationReason reason, std::source_location loc) {
  std::erase_if(roots, [](const ir::NodePtr& node) { return node->is_evaluated(); });
  if (roots.empty()) return;
  std::lock_guard lock(evaluation_mutex);
  ir::Graph graph = ir::Graph::collect(roots);
  roots.clear();  // the graph's outputs hold them now
  run(graph, results_to_keep(graph), reason, loc);
}

void evaluate_all(EvaluationReason reason, std::source_location loc) {
  std::lock_guard lock(evaluation_mutex);
  std::vector<ir::NodePtr> pending = ir::PendingList::global().snapshot();
  if (pending.empty()) return;
  ir::Graph graph = ir::Graph::collect(pending);
  pending.clear();
  // Every pending node is in the graph; only those held from outside it are results to keep,
  // and they are what the dump lists as outputs.
  graph.outputs.clear();
  const std::vector<bool> keep = results_to_keep(graph);
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (keep[i] && !graph.nodes[i]->is_evaluated()) graph.outputs.push_back(graph.nodes[i]);
  }
  run(graph, keep, reason, loc);
}

}  // namespace lz::frontend

namespace lz {

const char* evaluation_reason_name(EvaluationReason reason) {
  switch (reason) {
    case EvaluationReason::Item: return "item";
    case EvaluationReason::ToVector: return "to_vector";
    case EvaluationReason::Print: return "print";
    case EvaluationReason::WaitToRead: return "wait_to_read";
    case EvaluationReason::WaitAll: return "waitall";
    case EvaluationReason::EvalAsync: return "eval_async";
  }
  return "?";
}

EvaluationRecord last_evaluation() {
  std::lock_guard lock(frontend::evaluation_mutex);
  return frontend::last_record;
}

void waitall(std::source_location loc) {
  frontend::evaluate_all(EvaluationReason::WaitAll, loc);
}

}  // namespace lz
