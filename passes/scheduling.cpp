// The "schedule" pass: the kernel dependency DAG in Boost.Graph, a launch order, levels, a stream
// per kernel and the cross-stream waits the runtime must honour.
#include <algorithm>
#include <iterator>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/topological_sort.hpp>

#include "ir/graph.h"
#include "lazuli/error.h"
#include "passes/pass.h"
#include "plan/fusion_plan.h"
#include "plan/schedule.h"

namespace lz::passes {
namespace {

// Vertex i is plan::FusionPlan::kernels[i]; an edge A -> B means B reads a value A writes out.
// bidirectionalS so that a kernel's producers are its in-edges.
using KernelGraph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS>;

// `%3`: the node's name in IR text. Only for error messages (it indexes the whole graph).
std::string node_name(const ir::Node* node, const ir::Graph& graph) {
  const auto positions = graph.index();
  const auto found = positions.find(node);
  return found == positions.end() ? "%?" : "%" + std::to_string(found->second);
}

/// The DAG of the plan's kernels, one edge per producer -> consumer pair. Throws when a kernel
/// reads a computed value that no kernel writes out, or a value two kernels write.
KernelGraph build_kernel_graph(const plan::FusionPlan& plan, const ir::Graph& graph) {
  const int count = static_cast<int>(plan.kernels.size());
  std::unordered_map<const ir::Node*, int> writer;    // value -> the kernel writing it out
  std::unordered_map<const ir::Node*, int> computer;  // node -> the kernel computing it
  for (int k = 0; k < count; ++k) {
    for (const auto& node : plan.kernels[k].nodes) computer.emplace(node.get(), k);
    for (const auto& output : plan.kernels[k].outputs) {
      const auto [found, inserted] = writer.emplace(output.get(), k);
      if (!inserted && found->second != k) {
        throw Error("[schedule] kernels " + std::to_string(found->second) + " and " +
                    std::to_string(k) + " both write out " + node_name(output.get(), graph));
      }
    }
  }
  KernelGraph kernels(count);
  for (int k = 0; k < count; ++k) {
    std::vector<int> producers;
    for (const auto& input : plan.kernels[k].inputs) {
      const auto found = writer.find(input.get());
      if (found != writer.end()) {
        producers.push_back(found->second);
        continue;
      }
      if (input->op == ir::Op::Data) continue;  // a leaf: ready before any kernel runs
      const auto inside = computer.find(input.get());
      throw Error(
          "[schedule] kernel " + std::to_string(k) + " reads " + node_name(input.get(), graph) +
          " (" + std::string(ir::op_name(input->op)) + "), which " +
          (inside == computer.end()
               ? std::string("no kernel computes")
               : "kernel " + std::to_string(inside->second) + " computes but does not write out"));
    }
    std::sort(producers.begin(), producers.end());
    producers.erase(std::unique(producers.begin(), producers.end()), producers.end());
    for (const int producer : producers) boost::add_edge(producer, k, kernels);
  }
  return kernels;
}

/// By kernel: the longest chain of producers before it, following a topological order.
std::vector<int> levels_of(const KernelGraph& kernels) {
  std::vector<KernelGraph::vertex_descriptor> reverse_order;
  try {
    boost::topological_sort(kernels, std::back_inserter(reverse_order));
  } catch (const boost::not_a_dag&) {
    throw Error(
        "[schedule] the kernels' dependencies form a cycle; fusion must produce a DAG (a kernel "
        "may only read values of kernels before it)");
  }
  std::vector<int> level(boost::num_vertices(kernels), 0);
  for (auto vertex = reverse_order.rbegin(); vertex != reverse_order.rend(); ++vertex) {
    for (const auto edge : boost::make_iterator_range(boost::in_edges(*vertex, kernels))) {
      level[*vertex] = std::max(level[*vertex], level[boost::source(edge, kernels)] + 1);
    }
  }
  return level;
}

std::vector<int> producers_of(const KernelGraph& kernels, int kernel) {
  std::vector<int> producers;
  for (const auto edge : boost::make_iterator_range(boost::in_edges(kernel, kernels))) {
    producers.push_back(static_cast<int>(boost::source(edge, kernels)));
  }
  return producers;
}

// Streams, kernel by kernel in launch order (so level by level). A kernel prefers a stream that
// no other kernel of its level took yet, so that independent kernels overlap; among those, the
// stream holding most of its producers (each producer elsewhere may cost a wait), then the least
// loaded one, then the lowest number. When every stream already has a kernel of this level, the
// same preference applies over all streams.
std::vector<int> assign_streams(const KernelGraph& kernels, const std::vector<int>& order,
                                const std::vector<int>& level, int streams) {
  std::vector<int> stream(order.size(), -1);
  std::vector<int> load(streams, 0);
  std::vector<bool> taken_at_level(streams, false);
  int current_level = -1;
  for (const int kernel : order) {
    if (level[kernel] != current_level) {
      current_level = level[kernel];
      std::fill(taken_at_level.begin(), taken_at_level.end(), false);
    }
    std::vector<int> producers_on(streams, 0);
    for (const int producer : producers_of(kernels, kernel)) ++producers_on[stream[producer]];
    const bool any_free =
        std::find(taken_at_level.begin(), taken_at_level.end(), false) != taken_at_level.end();
    int best = -1;
    for (int s = 0; s < streams; ++s) {
      if (any_free && taken_at_level[s]) continue;
      if (best < 0 || producers_on[s] > producers_on[best] ||
          (producers_on[s] == producers_on[best] && load[s] < load[best])) {
        best = s;
      }
    }
    stream[kernel] = best;
    taken_at_level[best] = true;
    ++load[best];
  }
  return stream;
}

// The waits, with vector clocks: clock[k][s] is the position, among stream s's kernels, of the
// last one known to have finished when kernel k starts (-1: none). A stream runs in order, so k
// inherits the clock of the kernel before it on its stream; a wait for p adds p's clock. A
// producer p needs a wait only if the clock does not already cover it; producers are visited
// latest first, because waiting for a late kernel often covers the earlier ones too.
std::vector<plan::Schedule::Wait> cross_stream_waits(const KernelGraph& kernels,
                                                     const std::vector<int>& order,
                                                     const std::vector<int>& stream, int streams) {
  const size_t count = order.size();
  std::vector<int> launch_position(count), position_on_stream(count);
  std::vector<std::vector<int>> clock(count);
  std::vector<int> last_on_stream(streams, -1), next_on_stream(streams, 0);
  std::vector<plan::Schedule::Wait> waits;
  for (size_t i = 0; i < count; ++i) {
    const int kernel = order[i];
    const int s = stream[kernel];
    launch_position[kernel] = static_cast<int>(i);
    position_on_stream[kernel] = next_on_stream[s]++;
    clock[kernel] =
        last_on_stream[s] >= 0 ? clock[last_on_stream[s]] : std::vector<int>(streams, -1);
    clock[kernel][s] = position_on_stream[kernel];
    last_on_stream[s] = kernel;

    std::vector<int> producers = producers_of(kernels, kernel);
    std::sort(producers.begin(), producers.end(),
              [&](int a, int b) { return launch_position[a] > launch_position[b]; });
    std::vector<plan::Schedule::Wait> kernel_waits;
    for (const int producer : producers) {
      if (position_on_stream[producer] <= clock[kernel][stream[producer]]) continue;
      kernel_waits.push_back({kernel, producer});
      for (int t = 0; t < streams; ++t) {
        clock[kernel][t] = std::max(clock[kernel][t], clock[producer][t]);
      }
    }
    std::reverse(kernel_waits.begin(), kernel_waits.end());  // earliest producer first
    waits.insert(waits.end(), kernel_waits.begin(), kernel_waits.end());
  }
  return waits;
}

class Scheduling final : public Pass {
 public:
  std::string_view name() const override { return "schedule"; }

  void run(PassContext& context) override {
    if (!context.fusion) {
      throw Error("[schedule] needs the kernels of the fuse pass; run fuse first");
    }
    const int streams = context.options.streams;
    if (streams < 1) {
      throw Error("[schedule] PassOptions::streams must be at least 1, got " +
                  std::to_string(streams));
    }
    const KernelGraph kernels = build_kernel_graph(*context.fusion, context.graph);
    auto schedule = std::make_unique<plan::Schedule>();
    schedule->level = levels_of(kernels);
    // Launch order: by level, then by kernel id. Every producer has a lower level than its
    // consumers, so this is a topological order, and it launches each level's independent
    // kernels back to back, onto different streams. (A depth-first order would keep fewer
    // intermediates alive at once; this one favours overlap.)
    schedule->order.resize(schedule->level.size());
    for (size_t k = 0; k < schedule->order.size(); ++k) schedule->order[k] = static_cast<int>(k);
    std::stable_sort(schedule->order.begin(), schedule->order.end(),
                     [&](int a, int b) { return schedule->level[a] < schedule->level[b]; });
    schedule->stream = assign_streams(kernels, schedule->order, schedule->level, streams);
    schedule->waits = cross_stream_waits(kernels, schedule->order, schedule->stream, streams);
    context.schedule = std::move(schedule);
  }
};

}  // namespace

std::unique_ptr<Pass> make_scheduling() { return std::make_unique<Scheduling>(); }

}  // namespace lz::passes
