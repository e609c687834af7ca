// The "memplan" pass: buffer lifetimes of the intermediates over the schedule, reuse of freed
// buffers of the same size class, and in-place updates over inputs that die in the kernel.
//
// Size classes are byte sizes rounded up to a multiple of 64 (a cache line, the alignment the
// allocator gives every buffer anyway). Powers of two would let more sizes share a buffer but
// waste up to half of a large one; intermediates of one graph mostly share a few shapes, so the
// exact classes keep nearly all of the reuse at no waste.
//
// The kernels run on several streams, so "earlier in the launch order" does not mean "finished":
// a buffer is reused only by a kernel that the schedule orders after every kernel that touched
// the buffer's previous value (through its stream's order or the waits), never merely after it
// in the launch order.
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/graph.h"
#include "lazuli/dtype.h"
#include "lazuli/error.h"
#include "passes/pass.h"
#include "plan/fusion_plan.h"
#include "plan/memory_plan.h"
#include "plan/schedule.h"

namespace lz::passes {
namespace {

constexpr int64_t kSizeClassBytes = 64;

int64_t byte_size(const ir::Node& node) { return node.size() * dtype_size(node.dtype); }
int64_t size_class(int64_t bytes) {
  return (bytes + kSizeClassBytes - 1) / kSizeClassBytes * kSizeClassBytes;
}

/// What the schedule guarantees has finished when a kernel starts, as vector clocks over the
/// streams: kernel a has finished when kernel b starts (or is b) iff
/// position_on_stream[a] <= clock[b][stream[a]]. A stream runs its kernels in launch order and
/// each wait adds the producer's clock; these are the only orderings the runtime provides.
struct HappensBefore {
  std::vector<int> stream;
  std::vector<int> position_on_stream;
  std::vector<std::vector<int>> clock;

  HappensBefore(const plan::Schedule& schedule, int kernel_count) {
    int streams = 0;
    for (const int s : schedule.stream) streams = std::max(streams, s + 1);
    stream = schedule.stream;
    position_on_stream.assign(kernel_count, 0);
    clock.assign(kernel_count, std::vector<int>(streams, -1));
    std::unordered_map<int, std::vector<int>> producers_waited_for;
    for (const auto& wait : schedule.waits) {
      producers_waited_for[wait.kernel].push_back(wait.producer);
    }
    std::vector<int> last_on_stream(streams, -1), next_on_stream(streams, 0);
    for (const int kernel : schedule.order) {
      const int s = stream[kernel];
      if (last_on_stream[s] >= 0) clock[kernel] = clock[last_on_stream[s]];
      position_on_stream[kernel] = next_on_stream[s]++;
      clock[kernel][s] = position_on_stream[kernel];
      last_on_stream[s] = kernel;
      for (const int producer : producers_waited_for[kernel]) {
        for (int t = 0; t < streams; ++t) {
          clock[kernel][t] = std::max(clock[kernel][t], clock[producer][t]);
        }
      }
    }
  }

  /// Whether every kernel of `done` has finished when `kernel` starts (or is `kernel`).
  bool finished_by(const std::vector<int>& done, int kernel) const {
    return std::all_of(done.begin(), done.end(), [&](int other) {
      return position_on_stream[other] <= clock[kernel][stream[other]];
    });
  }
};

/// A planned value: an intermediate kernel output.
struct Value {
  ir::NodePtr node;
  int producer = 0;
  std::vector<int> readers;  // kernels reading it, each once
  int last_use = 0;          // launch position of the producer or last reader
  int buffer = -1;
};

struct FreeBuffer {
  int buffer = 0;
  std::vector<int> touched_by;  // the kernels that wrote or read the value it last held
};

/// The values a plan may place: kernel outputs that are neither graph outputs nor data leaves,
/// with their producer, readers and last use.
struct Intermediates {
  std::vector<Value> values;
  std::unordered_map<const ir::Node*, int> value_of;
};

Intermediates collect_intermediates(const plan::FusionPlan& plan, const ir::Graph& graph,
                                    const std::vector<int>& launch_position) {
  const int kernel_count = static_cast<int>(plan.kernels.size());
  std::unordered_set<const ir::Node*> graph_outputs;
  for (const auto& output : graph.outputs) graph_outputs.insert(output.get());
  Intermediates intermediates;
  std::vector<Value>& values = intermediates.values;
  std::unordered_map<const ir::Node*, int>& value_of = intermediates.value_of;
  for (int k = 0; k < kernel_count; ++k) {
    for (const auto& output : plan.kernels[k].outputs) {
      if (graph_outputs.count(output.get()) || output->op == ir::Op::Data) continue;
      if (value_of.emplace(output.get(), static_cast<int>(values.size())).second) {
        values.push_back({output, k, {}, launch_position[k], -1});
      }
    }
  }
  for (int k = 0; k < kernel_count; ++k) {
    for (const auto& input : plan.kernels[k].inputs) {
      const auto found = value_of.find(input.get());
      if (found == value_of.end()) continue;
      Value& value = values[found->second];
      if (std::find(value.readers.begin(), value.readers.end(), k) != value.readers.end()) continue;
      value.readers.push_back(k);
      value.last_use = std::max(value.last_use, launch_position[k]);
    }
  }
  return intermediates;
}

/// The planned inputs of `kernel`, launched at `position`, that die there: read last by it, all
/// other readers finished.
std::vector<int> dying_inputs(const plan::Kernel& kernel, int position,
                              const Intermediates& intermediates) {
  std::vector<int> dying;
  for (const auto& input : kernel.inputs) {
    const auto found = intermediates.value_of.find(input.get());
    if (found == intermediates.value_of.end() ||
        intermediates.values[found->second].last_use != position) {
      continue;
    }
    if (std::find(dying.begin(), dying.end(), found->second) == dying.end()) {
      dying.push_back(found->second);
    }
  }
  return dying;
}

plan::MemoryPlan plan_memory(const plan::FusionPlan& plan, const plan::Schedule& schedule,
                             const ir::Graph& graph) {
  const int kernel_count = static_cast<int>(plan.kernels.size());
  const HappensBefore happens_before(schedule, kernel_count);
  std::vector<int> launch_position(kernel_count);
  for (int i = 0; i < kernel_count; ++i) launch_position[schedule.order[i]] = i;
  Intermediates intermediates = collect_intermediates(plan, graph, launch_position);
  std::vector<Value>& values = intermediates.values;
  const std::unordered_map<const ir::Node*, int>& value_of = intermediates.value_of;

  plan::MemoryPlan memory;
  std::map<int64_t, std::vector<FreeBuffer>> free_by_class;
  const auto touched_by = [](const Value& value) {
    std::vector<int> kernels = value.readers;
    kernels.push_back(value.producer);
    return kernels;
  };
  for (int position = 0; position < kernel_count; ++position) {
    const int k = schedule.order[position];
    const plan::Kernel& kernel = plan.kernels[k];
    const std::vector<int> dying = dying_inputs(kernel, position, intermediates);
    std::vector<int> overwritten;  // dying inputs whose buffer an output took over
    for (const auto& output : kernel.outputs) {
      const auto found = value_of.find(output.get());
      if (found == value_of.end() || values[found->second].buffer >= 0) continue;
      Value& value = values[found->second];
      const int64_t bytes = byte_size(*value.node);
      bool in_place = false;
      for (const int input : dying) {
        const Value& old = values[input];
        if (byte_size(*old.node) != bytes || old.node->size() != value.node->size()) continue;
        if (std::find(overwritten.begin(), overwritten.end(), input) != overwritten.end()) continue;
        if (!happens_before.finished_by(touched_by(old), k)) continue;
        if (!plan::reads_index_aligned(kernel, *old.node)) continue;
        value.buffer = old.buffer;
        overwritten.push_back(input);
        in_place = true;
        break;
      }
      if (!in_place) {
        auto& free = free_by_class[size_class(bytes)];
        const auto reusable = std::find_if(free.begin(), free.end(), [&](const FreeBuffer& buffer) {
          return happens_before.finished_by(buffer.touched_by, k);
        });
        if (reusable != free.end()) {
          value.buffer = reusable->buffer;
          free.erase(reusable);
        } else {
          value.buffer = static_cast<int>(memory.buffer_bytes.size());
          memory.buffer_bytes.push_back(size_class(bytes));
        }
      }
      memory.assignments.push_back({value.node, value.buffer, in_place});
      memory.unplanned_bytes += size_class(bytes);
    }
    // Free what dies here and was not overwritten, and outputs that nothing reads.
    std::vector<int> released;
    for (const int input : dying) {
      if (std::find(overwritten.begin(), overwritten.end(), input) == overwritten.end()) {
        released.push_back(input);
      }
    }
    for (const auto& output : kernel.outputs) {
      const auto found = value_of.find(output.get());
      if (found != value_of.end() && values[found->second].readers.empty()) {
        released.push_back(found->second);
      }
    }
    for (const int value : released) {
      auto& free = free_by_class[size_class(byte_size(*values[value].node))];
      free.push_back({values[value].buffer, touched_by(values[value])});
      // Lowest buffer first, so that the plan does not depend on the order of release.
      std::sort(free.begin(), free.end(),
                [](const FreeBuffer& a, const FreeBuffer& b) { return a.buffer < b.buffer; });
    }
  }
  for (const int64_t bytes : memory.buffer_bytes) memory.planned_bytes += bytes;
  return memory;
}

class MemoryPlanning final : public Pass {
 public:
  std::string_view name() const override { return "memplan"; }

  void run(PassContext& context) override {
    if (!context.schedule || !context.fusion) {
      throw Error("[memplan] needs the schedule of the schedule pass; run fuse and schedule first");
    }
    const plan::Schedule& schedule = *context.schedule;
    const size_t count = context.fusion->kernels.size();
    if (schedule.order.size() != count || schedule.stream.size() != count) {
      throw Error("[memplan] the schedule covers " + std::to_string(schedule.order.size()) +
                  " kernels but the fusion plan has " + std::to_string(count) +
                  "; run schedule again after fuse");
    }
    context.memory =
        std::make_unique<plan::MemoryPlan>(plan_memory(*context.fusion, schedule, context.graph));
  }
};

}  // namespace

std::unique_ptr<Pass> make_memory_planning() { return std::make_unique<MemoryPlanning>(); }

}  // namespace lz::passes
