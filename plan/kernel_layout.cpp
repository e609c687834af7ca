#include "plan/kernel_layout.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <string>

#include "ir/op.h"
#include "plan/kernel_signature.h"
#include "plan/unsupported_kernel.h"

namespace lz::plan {
namespace {

bool is_reduction(const ir::Node& node) {
  return ir::op_info(node.op).kind == ir::OpKind::Reduction;
}

/// The product of the extents of `reduction`'s input along its axes (`along`) or the others.
int64_t input_elements(const ir::Node& reduction, bool along) {
  const Shape& shape = reduction.inputs[0]->shape;
  int64_t elements = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    const bool reduced = std::find(reduction.axes().begin(), reduction.axes().end(), int64_t(d)) !=
                         reduction.axes().end();
    if (reduced == along) elements *= shape[d];
  }
  return elements;
}

}  // namespace

int64_t reduced_elements(const ir::Node& reduction) { return input_elements(reduction, true); }

int64_t kept_elements(const ir::Node& reduction) { return input_elements(reduction, false); }

namespace {

// A virtual machine reports its host's whole last-level cache (320 MiB on one development
// machine of 2 cores), of which its cores see a slice. Streaming from 16 MiB on measured 10-20%
// faster on the fusion suite's 64 MB outputs there.
constexpr int64_t kMaxStreamingThreshold = int64_t{16} << 20;

int64_t last_level_cache_bytes() {
  for (const int level : {_SC_LEVEL3_CACHE_SIZE, _SC_LEVEL2_CACHE_SIZE}) {
    if (const long bytes = sysconf(level); bytes > 0) return bytes;
  }
  return int64_t{32} << 20;
}

std::atomic<int64_t> streaming_threshold_override{-1};

}  // namespace

int64_t cpu_streaming_threshold_bytes() {
  const int64_t override = streaming_threshold_override.load(std::memory_order_relaxed);
  if (override >= 0) return override;
  static const int64_t cache_bytes = std::min(last_level_cache_bytes(), kMaxStreamingThreshold);
  return cache_bytes;
}

void set_cpu_streaming_threshold_bytes(int64_t bytes) {
  streaming_threshold_override.store(bytes < 0 ? -1 : bytes, std::memory_order_relaxed);
}

bool cpu_streams_outputs(const Kernel& kernel) {
  if (!is_flat(kernel)) return false;
  int64_t bytes = 0;
  for (const ir::NodePtr& output : kernel.outputs) {
    bytes += output->size() * static_cast<int64_t>(dtype_size(output->dtype));
  }
  return bytes > 0 && bytes >= cpu_streaming_threshold_bytes();
}

bool cpu_splits_across_threads(const ir::Node& reduction) {
  return kept_elements(reduction) == 1 && reduced_elements(reduction) >= int64_t{1} << 16;
}

KernelLayout::KernelLayout(const Kernel& kernel, Sizes sizes) {
  // Stages a node's value waits for: a reduction's result is ready one stage after the stages
  // its input waits for.
  std::unordered_map<const ir::Node*, int> stages_before;
  std::vector<std::pair<int, const ir::Node*>> staged_reductions;
  for (size_t i = 0; i < kernel.nodes.size(); ++i) {
    const ir::Node* node = kernel.nodes[i].get();
    position[node] = static_cast<int>(i);
    scalar_slot[node] = scalar_count;
    scalar_count += scalar_slot_count(*node);
    const bool reduction = is_reduction(*node);
    bool depends = reduction;
    int waits = 0;
    for (const ir::NodePtr& input : node->inputs) {
      depends = depends || depends_on_reduction.contains(input.get());
      if (auto found = stages_before.find(input.get()); found != stages_before.end()) {
        waits = std::max(waits, found->second + (is_reduction(*input) ? 1 : 0));
      }
    }
    stages_before[node] = waits;
    if (depends) depends_on_reduction.insert(node);
    if (reduction) staged_reductions.emplace_back(waits, node);
  }
  if (sizes == Sizes::Runtime) {
    for (int64_t extent : runtime_extents(kernel)) runtime_extent_slot[extent] = scalar_count++;
  }
  flat = sizes == Sizes::Flat;
  if (staged_reductions.empty()) {
    const ir::Node* root = kernel.nodes.back().get();
    elementwise_loops.push_back(ElementwiseLoop{root, {}});
    for (const ir::NodePtr& output : kernel.outputs) {
      if (flat || output->shape == root->shape) {
        elementwise_loops.front().outputs.push_back(output.get());
      } else {
        add_separate_loop(output.get());
      }
    }
    return;
  }

  ReductionLoops& loops = reduction.emplace();
  const ir::Node& first = *staged_reductions.front().second;
  loops.input_shape = first.inputs[0]->shape;
  loops.axes = first.axes();
  for (const auto& [stage, node] : staged_reductions) {
    if (node->inputs[0]->shape != loops.input_shape || node->axes() != loops.axes) {
      throw UnsupportedKernel("reductions over different shapes or axes in one kernel");
    }
    if (static_cast<size_t>(stage) >= loops.stages.size()) loops.stages.resize(stage + 1);
    loops.stages[stage].push_back(node);
  }
  for (size_t d = 0; d < loops.input_shape.size(); ++d) {
    const bool is_reduced =
        std::find(loops.axes.begin(), loops.axes.end(), int64_t(d)) != loops.axes.end();
    (is_reduced ? loops.reduced_shape : loops.kept_shape).push_back(loops.input_shape[d]);
  }
  loops.kept = shape_size(loops.kept_shape);
  loops.reduced = shape_size(loops.reduced_shape);

  for (const ir::NodePtr& kernel_output : kernel.outputs) {
    const ir::Node* output = kernel_output.get();
    const bool depends = depends_on_reduction.contains(output);
    if (is_reduction(*output) ||
        (depends && output->shape != loops.input_shape && output->size() == loops.kept)) {
      loops.at_kept.push_back(output);
    } else if (output->shape == loops.input_shape) {
      (depends ? loops.in_final_loop : loops.in_first_loop).push_back(output);
    } else {
      add_separate_loop(output);
    }
  }
}

void KernelLayout::add_separate_loop(const ir::Node* output) {
  if (depends_on_reduction.contains(output)) {
    throw UnsupportedKernel("output %" + std::to_string(position.at(output)) +
                            " depends on a reduction but is neither shaped like its result nor "
                            "like its input");
  }
  elementwise_loops.push_back(ElementwiseLoop{output, {output}});
}

}  // namespace lz::plan
