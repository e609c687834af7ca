// A pass and the state a pipeline of passes transforms.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "ir/graph.h"
#include "ir/printer.h"

namespace lz::plan {
struct FusionPlan;  // plan/fusion_plan.h
struct Schedule;    // plan/schedule.h
}  // namespace lz::plan

namespace lz::passes {

/// Settings that passes read (each also an environment variable, see frontend/settings.h).
struct PassOptions {
  bool fusion = true;          // LZ_FUSION=0: one kernel per op
  int max_kernel_ops = 64;     // bigger kernels are split (compile time grows with size)
  int max_kernel_inputs = 16;  // so are kernels reading more buffers than this
  int streams = 2;             // streams the scheduler may spread independent kernels over
};

/// What a pipeline works on: a private copy of the pending graph (ir::clone_graph), which passes
/// may rewrite freely as long as outputs[i] keeps computing the same value, plus what the later
/// passes produce from it.
struct PassContext {
  explicit PassContext(ir::Graph graph, PassOptions options = {});
  ~PassContext();
  PassContext(PassContext&&) noexcept;
  PassContext& operator=(PassContext&&) noexcept;

  ir::Graph graph;
  PassOptions options;
  std::unique_ptr<plan::FusionPlan> fusion;  // set by "fuse"
  std::unique_ptr<plan::Schedule> schedule;  // set by "schedule" (needs "fuse")
  // Work counted, so that a test bounds it instead of timing the pass: "cse" adds the comparisons
  // of two distinct nodes' fields it made.
  int64_t node_comparisons = 0;
};

/// One named transformation or analysis; a pass is small and does one thing.
class Pass {
 public:
  virtual ~Pass() = default;
  /// The name used in pipelines, dumps and LZ_PASSES_OFF ("dce", "fuse", ...).
  virtual std::string_view name() const = 0;
  virtual void run(PassContext& context) = 0;
};

/// The passes by name. Throws lz::Error naming the known passes for an unknown name.
std::unique_ptr<Pass> make_pass(std::string_view name);

/// Whether make_pass knows `name`.
bool is_pass_name(std::string_view name);

/// The names make_pass knows, for messages: "dce, cse, simplify, fuse, schedule".
std::string pass_names_text();

std::unique_ptr<Pass> make_dead_code_elimination();             // "dce"
std::unique_ptr<Pass> make_common_subexpression_elimination();  // "cse"
std::unique_ptr<Pass> make_simplification();                    // "simplify"
std::unique_ptr<Pass> make_fusion();                            // "fuse"
std::unique_ptr<Pass> make_scheduling();                        // "schedule"

/// The context as text: the graph (ir/printer.h format), then, once computed, the kernels with the
/// reasons fusion stopped and the schedule, as `//` comment lines so that any
/// dump parses back (lazuli-opt replays it). `locations` as for ir::print_graph.
std::string print_context(const PassContext& context, const ir::LocationOverrides& locations = {});

}  // namespace lz::passes
