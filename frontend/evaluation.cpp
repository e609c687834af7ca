#include "frontend/evaluation.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <regex>

#include "frontend/settings.h"
#include "ir/clone.h"
#include "ir/dot.h"
#include "ir/graph.h"
#include "ir/pending_list.h"
#include "ir/printer.h"
#include "lazuli/error.h"
#include "lazuli/stats.h"
#include "passes/fusion_plan.h"
#include "passes/pass_manager.h"
#include "runtime/kernel_executor.h"
#include "runtime/statistics.h"

namespace lz::frontend {
namespace {

// One evaluation at a time: passes and kernels run on the calling thread.
std::mutex evaluation_mutex;
uint64_t evaluation_count = 0;  // guarded by evaluation_mutex
EvaluationRecord last_record;   // guarded by evaluation_mutex

std::string location_string(std::source_location loc) {
  // operator<< cannot capture its caller's location; it passes a default-constructed one.
  if (loc.file_name()[0] == '\0') return "operator<<";
  return std::string(loc.file_name()) + ":" + std::to_string(loc.line());
}

/// Whether each node's result must outlive this evaluation: it does when someone outside the
/// graph (a user's Tensor, a pending node not being evaluated now) still holds it. Every other
/// result is an intermediate that lives only inside this evaluation.
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
  const std::filesystem::path base = std::filesystem::path(directory) /
                                     (prefix + std::string(evaluation_reason_name(record.reason)));
  std::ofstream(base.string() + ".lzir")
      << "// evaluation " << record.number << ": " << evaluation_reason_name(record.reason)
      << " at " << record.location << "\n"
      << ir::print_graph(graph);
  std::ofstream(base.string() + ".dot") << ir::graph_to_dot(graph);
  if (error) std::cerr << "[lazuli] cannot create LZ_DUMP directory " << directory << "\n";
}

std::vector<std::string> split_names(const std::string& comma_separated) {
  std::vector<std::string> names;
  size_t start = 0;
  while (start <= comma_separated.size()) {
    const size_t comma = std::min(comma_separated.find(',', start), comma_separated.size());
    if (comma > start) names.push_back(comma_separated.substr(start, comma - start));
    start = comma + 1;
  }
  return names;
}

/// Writes the context after each pass whose name matches `selected` into `folder`, numbered in
/// pipeline order ("input", the graph before the first pass, is position 0).
passes::PassManager::Observer dump_passes(const std::filesystem::path& folder,
                                          const std::string& selected) {
  std::error_code error;
  std::filesystem::create_directories(folder, error);
  return [folder, pattern = std::regex(selected)](int position, std::string_view pass,
                                                  const passes::PassContext& context) {
    if (!std::regex_match(pass.begin(), pass.end(), pattern)) return;
    char name[64];
    std::snprintf(name, sizeof(name), "%04d.%s%.*s.lzir", position, position == 0 ? "" : "after_",
                  static_cast<int>(pass.size()), pass.data());
    std::ofstream(folder / name) << passes::print_context(context);
  };
}

void run(ir::Graph graph, const std::vector<bool>& keep, EvaluationReason reason,
         std::source_location loc) {
  const auto start = std::chrono::steady_clock::now();
  const Settings settings = current_settings();
  EvaluationRecord record;
  record.number = ++evaluation_count;
  record.reason = reason;
  record.location = location_string(loc);
  for (const ir::NodePtr& node : graph.nodes) record.nodes += node->is_evaluated() ? 0 : 1;
  // The outputs become the results to keep: what the dump lists, and what the passes' private
  // copy must compute, by position.
  graph.outputs.clear();
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (keep[i] && !graph.nodes[i]->is_evaluated()) graph.outputs.push_back(graph.nodes[i]);
  }
  if (!settings.dump_directory.empty()) dump(settings.dump_directory, graph, record);
  passes::PassOptions options;
  options.fusion = settings.fusion;
  passes::PassContext context(ir::clone_graph(graph), options);
  passes::PassManager manager;
  for (const std::string& name : split_names(settings.disabled_passes)) manager.disable(name);
  runtime::ExecutionOptions execution;
  execution.jit = settings.jit;
  execution.cache_directory = settings.cache_directory;
  execution.log_level = settings.log_level;
  if (!settings.dump_directory.empty()) {
    char folder[48];
    std::snprintf(folder, sizeof(folder), "%04llu.%s",
                  static_cast<unsigned long long>(record.number), evaluation_reason_name(reason));
    const std::filesystem::path folder_path =
        std::filesystem::path(settings.dump_directory) / folder;
    manager.set_observer(dump_passes(folder_path, settings.dump_passes));
    // The compiled kernels' IR and assembly count as the stage "codegen" for LZ_DUMP_PASSES.
    if (std::regex_match("codegen", std::regex(settings.dump_passes))) {
      execution.dump_directory = folder_path.string();
    }
  }
  std::vector<std::shared_ptr<runtime::Buffer>> results;
  try {
    manager.run(context);
    results = runtime::execute(context, execution);
  } catch (const std::exception& error) {
    // Nothing was committed: every node stays pending, and the failure is on record.
    if (settings.log_level != LogLevel::Off) {
      std::fprintf(stderr, "[lazuli] evaluation %llu: %s at %s failed: %s\n",
                   static_cast<unsigned long long>(record.number), evaluation_reason_name(reason),
                   record.location.c_str(), error.what());
    }
    last_record = std::move(record);
    throw;
  }

  for (size_t i = 0; i < graph.outputs.size(); ++i) {
    ir::Node& node = *graph.outputs[i];
    ir::PendingList::global().remove(&node);
    node.become_data(std::move(results[i]));
  }

  record.kernels =
      context.fusion ? static_cast<int64_t>(context.fusion->kernels.size()) : record.nodes;
  record.milliseconds =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  runtime::counters().evaluations.fetch_add(1, std::memory_order_relaxed);
  runtime::counters().nodes_evaluated.fetch_add(record.nodes, std::memory_order_relaxed);
  if (settings.log_level != LogLevel::Off) {
    std::fprintf(stderr, "[lazuli] evaluation %llu: %s at %s nodes=%lld kernels=%lld time=%.3fms\n",
                 static_cast<unsigned long long>(record.number), evaluation_reason_name(reason),
                 record.location.c_str(), static_cast<long long>(record.nodes),
                 static_cast<long long>(record.kernels), record.milliseconds);
  }
  if (settings.log_level == LogLevel::Debug) {
    for (const passes::PassTiming& timing : manager.timings()) {
      std::fprintf(stderr, "[lazuli]   pass %s: %.3f ms\n", timing.pass.c_str(),
                   timing.milliseconds);
    }
    const Stats totals = stats();
    std::fprintf(stderr,
                 "[lazuli]   totals: evaluations=%lld nodes=%lld kernels_launched=%lld "
                 "bytes_allocated=%lld\n",
                 static_cast<long long>(totals.evaluations),
                 static_cast<long long>(totals.nodes_evaluated),
                 static_cast<long long>(totals.kernels_launched),
                 static_cast<long long>(totals.bytes_allocated));
  }
  last_record = std::move(record);
}

}  // namespace

void evaluate(std::vector<ir::NodePtr> roots, EvaluationReason reason, std::source_location loc) {
  // Under the lock even when nothing is pending, so that the caller then reads the buffers an
  // evaluation on another thread wrote.
  std::lock_guard lock(evaluation_mutex);
  std::erase_if(roots, [](const ir::NodePtr& node) { return node->is_evaluated(); });
  if (roots.empty()) return;
  ir::Graph graph = ir::Graph::collect(roots);
  roots.clear();  // the graph's outputs hold them now
  const std::vector<bool> keep = results_to_keep(graph);
  run(std::move(graph), keep, reason, loc);
}

void evaluate_all(EvaluationReason reason, std::source_location loc) {
  std::lock_guard lock(evaluation_mutex);
  std::vector<ir::NodePtr> pending = ir::PendingList::global().snapshot();
  if (pending.empty()) return;
  ir::Graph graph = ir::Graph::collect(pending);
  pending.clear();
  // Every pending node is in the graph; only those held from outside it are results to keep.
  graph.outputs.clear();
  const std::vector<bool> keep = results_to_keep(graph);
  run(std::move(graph), keep, reason, loc);
}

bool is_computed(const ir::NodePtr& node) {
  std::lock_guard lock(evaluation_mutex);
  return node->is_evaluated();
}

std::string describe_pending(std::vector<ir::NodePtr> roots,
                             std::string (*describe)(const ir::Graph&)) {
  std::lock_guard lock(evaluation_mutex);
  return describe(ir::Graph::collect(roots));
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

void waitall(std::source_location loc) { frontend::evaluate_all(EvaluationReason::WaitAll, loc); }

}  // namespace lz
