#include "frontend/launch.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <regex>

#include "frontend/evaluation.h"
#include "frontend/settings.h"
#include "ir/clone.h"
#include "ir/dot.h"
#include "ir/op.h"
#include "ir/pending_list.h"
#include "ir/printer.h"
#include "lazuli/error.h"
#include "lazuli/stats.h"
#include "passes/pass_manager.h"
#include "passes/plan_cache.h"
#include "plan/fusion_plan.h"
#include "runtime/devices.h"
#include "runtime/kernel_executor.h"
#include "support/statistics.h"
#include "support/trace.h"

namespace lz::frontend {
namespace {

uint64_t evaluation_count = 0;  // guarded by the graph lock

/// The record of the latest evaluation, written once its passes have run (outside the graph
/// lock).
struct LatestRecord {
  std::mutex mutex;
  EvaluationRecord record;
};
LatestRecord& latest_record() {
  static auto* latest = new LatestRecord();  // never destroyed: launches run at exit
  return *latest;
}

/// Keeps `record` as the latest unless a later evaluation's is there already.
void set_latest_record(const EvaluationRecord& record) {
  LatestRecord& latest = latest_record();
  std::lock_guard lock(latest.mutex);
  if (record.number >= latest.record.number) latest.record = record;
}

/// The wall time of the evaluation that finished last, written by the thread that ran it (which
/// holds no graph lock) before its readers wake up.
struct FinishedEvaluation {
  std::mutex mutex;
  uint64_t number = 0;
  double milliseconds = 0;
};
FinishedEvaluation& last_finished() {
  static auto* finished = new FinishedEvaluation();  // never destroyed: launches run at exit
  return *finished;
}

/// An op whose result is cheap to compute again from its inputs: elementwise, movement (index
/// arithmetic inside a kernel) or a generated leaf (full, arange, counter-based random).
bool is_cheap_to_recompute(const ir::Node& node) {
  switch (ir::op_info(node.op).kind) {
    case ir::OpKind::Unary:
    case ir::OpKind::Binary:
    case ir::OpKind::Ternary:
    case ir::OpKind::Movement: return true;
    case ir::OpKind::Leaf: return node.op != ir::Op::Data;
    case ir::OpKind::Reduction:
    case ir::OpKind::LinearAlgebra:
    case ir::OpKind::Collective: return false;  // computing one twice would desync the ranks
  }
  return false;
}

/// Which results an evaluation writes out, and how many held ones it leaves pending.
struct KeptResults {
  std::vector<bool> keep;
  std::vector<ir::Node*> left;  // held, left pending
};

/// Whether each node's result must outlive this evaluation: it does when someone outside the
/// graph (a user's Tensor, a pending node not being evaluated now) still holds it. Every other
/// result is an intermediate that lives only inside this evaluation.
///
/// A blocking point on some results (`graph.outputs`, the requested ones; waitall and the node
/// budget request none and keep everything held) writes out only those, plus the held results
/// that are expensive to compute again. A held intermediate stays pending, as if never
/// evaluated, when it and everything it reads that is not written out now is cheap to recompute
/// (is_cheap_to_recompute): a C++ temporary of a one-line expression, or `a * b` in
/// `sum(a * b).item()`, costs no buffer and no store. A later read computes it from the
/// results written out, never a matmul or a reduction again. A node is left pending once: when
/// an evaluation computes it again, it is written out if still held, and what reads it is not
/// left pending, so a loop such as `x = x * 0.9 + 1; sum(x).item();` recomputes at most one
/// step and its graph cannot grow.
KeptResults results_to_keep(const ir::Graph& graph, const ir::Wiring& wiring) {
  // References held by the graph itself: its node list, its consumers' inputs, its outputs.
  std::vector<long> internal(graph.nodes.size(), 1);
  for (int32_t input : wiring.inputs) ++internal[input];
  std::vector<bool> requested(graph.nodes.size(), false);
  for (int32_t output : wiring.outputs) {
    ++internal[output];
    requested[output] = true;
  }
  const bool targeted = !graph.outputs.empty();
  KeptResults result;
  result.keep.assign(graph.nodes.size(), false);
  // Recomputable later from what exists after this evaluation, by cheap ops only.
  std::vector<bool> recomputable(graph.nodes.size(), false);
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const ir::Node& node = *graph.nodes[i];
    // A reused number operand is held by recording, for the next op that reads the number.
    const bool held = graph.nodes[i].use_count() > internal[i] && !node.reused_constant;
    if (node.is_evaluated()) {
      result.keep[i] = held;
      continue;
    }
    bool cheap = is_cheap_to_recompute(node) && !node.left_pending;
    for (int32_t j : wiring.inputs_of(i)) {
      cheap = cheap && (graph.nodes[j]->is_evaluated() || result.keep[j] || recomputable[j]);
    }
    recomputable[i] = cheap;
    result.keep[i] = held && (!targeted || requested[i] || !cheap);
    if (held && !result.keep[i]) result.left.push_back(graph.nodes[i].get());
  }
  return result;
}

/// Whether every node of `graph` is a pending result to keep or an input, directly or not, of
/// one: then the graph that the kept results alone reach has the same nodes (perhaps in another
/// order, which is as deterministic as the walk's).
bool only_kept_results_need(const ir::Graph& graph, const ir::Wiring& wiring,
                            const std::vector<bool>& keep) {
  std::vector<bool> needed(graph.nodes.size(), false);
  for (size_t i = graph.nodes.size(); i-- > 0;) {
    if (keep[i] && !graph.nodes[i]->is_evaluated()) needed[i] = true;
    if (!needed[i]) return false;
    for (int32_t input : wiring.inputs_of(i)) needed[input] = true;
  }
  return true;
}

/// Whether the dump directory exists or could be made; when not, says so on stderr and turns
/// dumping off, so that an unusable LZ_DUMP costs one line instead of every evaluation.
bool dump_directory_usable(const std::string& directory) {
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  if (!error && std::filesystem::is_directory(directory, error)) return true;
  const std::string why = error ? error.message() : "it is not a directory";
  std::fprintf(stderr, "[lazuli] dumping is off: the dump directory %s cannot be used (%s)\n",
               directory.c_str(), why.c_str());
  set_dump_directory("");
  return false;
}

void dump(const std::string& directory, const ir::Graph& graph, const EvaluationRecord& record) {
  char prefix[32];
  std::snprintf(prefix, sizeof(prefix), "%04llu.", static_cast<unsigned long long>(record.number));
  const std::filesystem::path base = std::filesystem::path(directory) /
                                     (prefix + std::string(evaluation_reason_name(record.reason)));
  std::ofstream(base.string() + ".lzir")
      << "// evaluation " << record.number << ": " << evaluation_reason_name(record.reason)
      << " at " << record.location << "\n"
      << ir::print_graph(graph);
  std::ofstream(base.string() + ".dot") << ir::graph_to_dot(graph);
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

/// Failures of launched work that no blocking point has raised yet; waitall raises the earliest.
class UnreportedFailures {
 public:
  void add(const std::exception_ptr& error) {
    std::lock_guard lock(mutex_);
    // waitall raises the earliest; past the bound, a program that never waits keeps only the
    // earliest failures instead of every one it ever had.
    if (failures_.size() >= kMaxKept) return;
    if (std::find(failures_.begin(), failures_.end(), error) == failures_.end()) {
      failures_.push_back(error);
    }
  }
  void forget(const std::exception_ptr& error) {
    std::lock_guard lock(mutex_);
    std::erase(failures_, error);
  }
  /// The earliest failure, forgetting them all; null when there was none.
  std::exception_ptr take_earliest() {
    std::lock_guard lock(mutex_);
    std::exception_ptr earliest = failures_.empty() ? nullptr : failures_.front();
    failures_.clear();
    return earliest;
  }

 private:
  static constexpr size_t kMaxKept = 1024;
  std::mutex mutex_;
  std::vector<std::exception_ptr> failures_;
};

UnreportedFailures& unreported_failures() {
  static auto* failures = new UnreportedFailures();  // launched work may end after main returns
  return *failures;
}

}  // namespace

/// One device's part of an evaluation: made under the graph lock with its promises and its
/// stream's slot, optimized outside it (prepare_launch), then run on that stream.
struct Launch {
  Launch() = default;
  Launch(const Launch&) = delete;
  Launch& operator=(const Launch&) = delete;
  /// A launch dropped before it ran (its queueing failed) fails its promises, so that nobody
  /// waits for them forever.
  ~Launch() {
    if (done->is_set()) return;
    abandon(std::make_exception_ptr(Error("evaluation " + std::to_string(record.number) + " at " +
                                          record.location + " was dropped before it ran")));
  }

  /// Fails every promise with `why` and sets the events, unless the launch has run already.
  void abandon(const std::exception_ptr& why) {
    if (done->is_set()) return;
    for (const auto& promise : promises) promise->fail(why);
    promises.clear();
    prepared->set();
    done->set();
  }

  // Until prepared: what the plan cache found, and the passes to run on a miss.
  std::optional<passes::PlanCache::Lookup> lookup;
  std::optional<passes::PassManager> manager;
  Settings settings;
  const char* plan = "off";  // for the log: plan cache "hit", "miss", or "off"
  /// Set once `context` is optimized: the stream's slot waits for it.
  std::shared_ptr<memory::Event> prepared = std::make_shared<memory::Event>();
  bool claimed = false;  // run by the launching thread instead of its stream's worker

  passes::PassContext context{ir::Graph{}};
  passes::PlanCache::Origin origin;  // where `context` came from, to give it back once run
  runtime::ExecutionOptions options;
  std::vector<std::shared_ptr<memory::Buffer>> promises;  // one per context.graph.outputs
  std::shared_ptr<memory::Event> done = std::make_shared<memory::Event>();
  EvaluationRecord record;
  std::chrono::steady_clock::time_point started;  // at the blocking point
  Device device = Device::cpu();
  int stream = 0;     // of the device: the launching thread's StreamScope
  uint64_t flow = 0;  // the trace's arrow from the launch to the run
};

namespace {

/// Launched work not finished yet: the frontend waits for the oldest when there is too much of it.
class InFlight {
 public:
  void add(const Launch& launch) {
    std::lock_guard lock(mutex_);
    launches_.push_back(
        {launch.done, promised_bytes(launch), launch.record.nodes, launch.record.number});
  }

  /// Blocks until fewer than max_in_flight() launches are unfinished, their promised bytes are
  /// at most half the memory limit and their recorded nodes at most kMaxNodesInFlight; says in
  /// the log why it waited.
  void wait_for_room(std::source_location loc) {
    while (true) {
      Entry oldest;
      std::string why;
      {
        std::lock_guard lock(mutex_);
        std::erase_if(launches_, [](const Entry& entry) { return entry.done->is_set(); });
        if (launches_.empty()) return;
        int64_t bytes = 0;
        int64_t nodes = 0;
        for (const Entry& entry : launches_) {
          bytes += entry.bytes;
          nodes += entry.nodes;
        }
        const auto count = static_cast<int64_t>(launches_.size());
        if (count >= max_in_flight()) {
          why = std::to_string(count) +
                " evaluations in flight (LZ_MAX_IN_FLIGHT=" + std::to_string(max_in_flight()) + ")";
        } else if (bytes > memory::Buffer::memory_limit() / 2) {
          why = std::to_string(bytes) + " bytes of results in flight, over half of " +
                "LZ_MEMORY_LIMIT=" + std::to_string(memory::Buffer::memory_limit());
        } else if (nodes > kMaxNodesInFlight) {
          why = std::to_string(nodes) + " recorded nodes in flight (at most " +
                std::to_string(kMaxNodesInFlight) + ")";
        } else {
          return;
        }
        oldest = launches_.front();
      }
      if (current_settings().log_level != LogLevel::Off) {
        std::fprintf(stderr, "[lazuli] back-pressure at %s: %s; waiting for evaluation %llu\n",
                     location_string(loc).c_str(), why.c_str(),
                     static_cast<unsigned long long>(oldest.number));
      }
      support::trace::Span span("wait", "back-pressure");
      span.arg("why", why);
      oldest.done->wait();
    }
  }

 private:
  /// Each launch holds its optimized graph until it has run (a few hundred bytes a node): the
  /// launches of a loop that records faster than its stream computes would otherwise hold up
  /// to LZ_MAX_IN_FLIGHT graphs of LZ_MAX_PENDING_NODES nodes.
  static constexpr int64_t kMaxNodesInFlight = 100'000;

  struct Entry {
    std::shared_ptr<memory::Event> done;
    int64_t bytes = 0;
    int64_t nodes = 0;
    uint64_t number = 0;
  };

  static int64_t promised_bytes(const Launch& launch) {
    int64_t bytes = 0;
    for (const auto& promise : launch.promises) bytes += promise->bytes();
    return bytes;
  }

  std::mutex mutex_;
  std::deque<Entry> launches_;  // oldest first
};

InFlight& in_flight() {
  static auto* launches = new InFlight();
  return *launches;
}

passes::PlanCache& plan_cache() {
  static auto* cache = new passes::PlanCache();  // never destroyed: launches run at exit
  return *cache;
}

/// Computes a launch's outputs; a failure of the executor's own bookkeeping fails them all.
std::vector<runtime::Outcome> compute(Launch& launch) {
  support::trace::Span span("run", "evaluation");
  span.arg("number", static_cast<int64_t>(launch.record.number));
  span.flow_in(launch.flow);
  try {
    return runtime::execute_each(launch.context.graph, launch.context.fusion.get(), launch.options);
  } catch (...) {
    return std::vector<runtime::Outcome>(launch.promises.size(),
                                         {nullptr, std::current_exception()});
  }
}

/// Fulfils or fails each promise with its outcome; returns how many failed.
int publish(Launch& launch, std::vector<runtime::Outcome> outcomes) {
  // A failure read from an input computed by an earlier launch was reported there (and maybe
  // raised already); only this launch's own failures are new.
  std::vector<std::exception_ptr> inherited;
  for (const ir::NodePtr& node : launch.context.graph.nodes) {
    if (node->is_evaluated() && node->buffer->error()) inherited.push_back(node->buffer->error());
  }
  int failed = 0;
  for (size_t i = 0; i < outcomes.size(); ++i) {
    if (outcomes[i].error) {
      launch.promises[i]->fail(outcomes[i].error);
      if (std::find(inherited.begin(), inherited.end(), outcomes[i].error) == inherited.end()) {
        unreported_failures().add(outcomes[i].error);
      }
      ++failed;
    } else {
      launch.promises[i]->fulfil(std::move(outcomes[i].buffer));
    }
  }
  return failed;
}

/// Runs a launch on its stream's thread (or on a caller that claimed the stream): computes the
/// outputs, fulfils or fails their promised buffers, then sets the event readers wait for.
void run_launch(Launch& launch) noexcept {
  const auto start = std::chrono::steady_clock::now();
  try {
    const int failed = publish(launch, compute(launch));
    if (launch.options.log_level != LogLevel::Off) {
      const std::string failures =
          failed > 0 ? ", " + std::to_string(failed) + " results failed" : std::string();
      std::fprintf(
          stderr, "[lazuli] evaluation %llu ran on %s stream %d: %.3fms%s\n",
          static_cast<unsigned long long>(launch.record.number), launch.device.name().c_str(),
          launch.stream,
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count(),
          failures.c_str());
    }
  } catch (...) {  // out of memory in the bookkeeping: what is not published yet fails
    launch.abandon(std::current_exception());
    return;
  }
  {
    FinishedEvaluation& finished = last_finished();
    std::lock_guard lock(finished.mutex);
    finished.number = launch.record.number;
    finished.milliseconds =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - launch.started)
            .count();
  }
  // The graph and the buffers only it holds go before readers wake up; a plan cache hit's
  // graph goes back to the cache, for the next hit of its structure.
  const std::shared_ptr<memory::Event> done = launch.done;
  plan_cache().give_back(std::move(launch.origin), std::move(launch.context));
  launch.context = passes::PassContext(ir::Graph{});
  launch.promises.clear();
  done->set();
}

runtime::Stream& stream_of(const Launch& launch) {
  return runtime::device_stream(launch.device, launch.stream);
}

/// The pass pipeline for one launch: the disabled passes, and, when dumping (LZ_DUMP), the
/// analyses and an observer that dumps each stage. Sets where the compiled kernels are dumped.
/// (Each pass is a trace span of its own: passes/pass_manager.cpp.)
passes::PassManager configure_passes(const Settings& settings, const EvaluationRecord& record,
                                     runtime::ExecutionOptions& execution) {
  const bool dumping = !settings.dump_directory.empty();
  passes::PassManager manager(dumping ? passes::with_analyses(passes::kDefaultPipeline)
                                      : std::string(passes::kDefaultPipeline));
  for (const std::string& name : split_names(settings.disabled_passes)) manager.disable(name);
  if (dumping) {
    char folder[48];
    std::snprintf(folder, sizeof(folder), "%04llu.%s",
                  static_cast<unsigned long long>(record.number),
                  evaluation_reason_name(record.reason));
    const std::filesystem::path folder_path =
        std::filesystem::path(settings.dump_directory) / folder;
    manager.set_observer(dump_passes(folder_path, settings.dump_passes));
    // The compiled kernels' IR and assembly count as the stage "codegen" for LZ_DUMP_PASSES.
    if (std::regex_match("codegen", std::regex(settings.dump_passes))) {
      execution.dump_directory = folder_path.string();
    }
  }
  return manager;
}

/// What names the passes configure_passes runs without dumping: with the pass options, what a
/// plan cache entry is for.
std::string pipeline_key(const Settings& settings) {
  return std::string(passes::kDefaultPipeline) + " without " + settings.disabled_passes;
}

/// `plan`: where the passes' result came from ("hit", "miss", or "off" without the plan cache);
/// `manager`: the passes that ran, null on a hit.
void log_launch(const Settings& settings, const Launch& launch, const char* plan,
                const passes::PassManager* manager) {
  const EvaluationRecord& record = launch.record;
  if (settings.log_level != LogLevel::Off) {
    const std::string left_pending =
        record.left_pending == 0 ? ""
                                 : " left_pending=" + std::to_string(record.left_pending) +
                                       " (held intermediates, cheap to recompute, not written)";
    std::fprintf(stderr,
                 "[lazuli] evaluation %llu: %s at %s on %s nodes=%lld kernels=%lld plan=%s "
                 "prepare=%.3fms%s\n",
                 static_cast<unsigned long long>(record.number),
                 evaluation_reason_name(record.reason), record.location.c_str(),
                 launch.device.name().c_str(), static_cast<long long>(record.nodes),
                 static_cast<long long>(record.kernels), plan, record.prepare_milliseconds,
                 left_pending.c_str());
  }
  if (settings.log_level == LogLevel::Debug) {
    for (const passes::PassTiming& timing :
         manager ? manager->timings() : std::vector<passes::PassTiming>{}) {
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
}

/// Starts the launch of the pending work behind `graph`, whose outputs are the results to keep,
/// all on one device: looks its structure up in the plan cache (on a miss, builds the passes,
/// so that a pipeline that cannot be built fails with nothing changed), gives the outputs
/// promised buffers (they become data leaves at once), and takes the launch's slot on the
/// device's stream, or the whole stream when `claim` is set and it is idle. The slot waits for
/// prepare_launch, which runs the passes outside the graph lock. Called under the graph lock.
std::shared_ptr<Launch> launch(ir::Graph graph, const ir::Wiring& wiring, Device device,
                               EvaluationReason reason, std::source_location loc, bool claim,
                               int64_t left_pending) {
  const auto start = std::chrono::steady_clock::now();
  auto launched = std::make_shared<Launch>();
  Settings& settings = launched->settings;
  settings = current_settings();
  if (!settings.dump_directory.empty() && !dump_directory_usable(settings.dump_directory)) {
    settings.dump_directory.clear();
  }
  EvaluationRecord& record = launched->record;
  record.number = ++evaluation_count;
  record.reason = reason;
  record.location = location_string(loc);
  record.left_pending = left_pending;
  for (const ir::NodePtr& node : graph.nodes) record.nodes += node->is_evaluated() ? 0 : 1;
  if (!settings.dump_directory.empty()) dump(settings.dump_directory, graph, record);
  support::trace::Span span("launch", "evaluation");
  span.arg("number", static_cast<int64_t>(record.number));
  span.arg("reason", evaluation_reason_name(reason));
  span.arg("location", record.location);

  passes::PassOptions options;
  options.fusion = settings.fusion;
  runtime::ExecutionOptions& execution = launched->options;
  execution.jit = settings.jit;
  execution.cache_directory = settings.cache_directory;
  execution.log_level = settings.log_level;
  // Dumps show every pass, so dumping runs them every time.
  const bool cached = settings.plan_cache && settings.dump_directory.empty();
  try {
    launched->lookup = cached ? plan_cache().look_up(graph, wiring, pipeline_key(settings), options)
                              : passes::PlanCache::uncached(graph, options);
    if (!launched->lookup->hit()) {
      launched->manager.emplace(configure_passes(settings, record, execution));
    }
  } catch (const std::exception& error) {
    // Nothing was launched: every node stays pending, and the failure is on record.
    if (settings.log_level != LogLevel::Off) {
      std::fprintf(stderr, "[lazuli] evaluation %llu: %s at %s failed: %s\n",
                   static_cast<unsigned long long>(record.number), evaluation_reason_name(reason),
                   record.location.c_str(), error.what());
    }
    set_latest_record(record);
    launched->abandon(std::current_exception());
    throw;
  }
  if (cached) {
    launched->plan = launched->lookup->hit() ? "hit" : "miss";
    (launched->lookup->hit() ? support::counters().plan_hits : support::counters().plan_misses)
        .fetch_add(1, std::memory_order_relaxed);
  }

  // What may still fail (allocating, starting the stream's worker) happens before any node
  // changes; once the outputs hold the promises, a failure to queue fails the promises instead.
  launched->promises.reserve(graph.outputs.size());
  for (const ir::NodePtr& output : graph.outputs) {
    launched->promises.push_back(
        memory::Buffer::promise(output->dtype, output->size(), launched->done));
  }
  launched->started = start;
  launched->device = device;
  launched->stream = current_stream();
  execution.device = device;
  execution.stream = launched->stream;
  launched->flow = support::trace::new_flow_id();
  runtime::Stream& stream = stream_of(*launched);
  span.flow_out(launched->flow);
  support::counters().evaluations.fetch_add(1, std::memory_order_relaxed);
  support::counters().nodes_evaluated.fetch_add(record.nodes, std::memory_order_relaxed);

  for (size_t i = 0; i < graph.outputs.size(); ++i) {
    ir::PendingList::global().remove(graph.outputs[i].get());
    graph.outputs[i]->become_data(launched->promises[i]);
  }
  try {
    in_flight().add(*launched);
    if (claim && stream.claim_if_idle()) {
      launched->claimed = true;
    } else {
      stream.submit([launched] {
        launched->prepared->wait();
        if (!launched->done->is_set()) run_launch(*launched);
      });
    }
  } catch (...) {
    launched->abandon(std::current_exception());
    throw;
  }
  return launched;
}

/// Runs the passes of a launch (or takes the plan cache's hit), outside the graph lock, then
/// logs it and lets its stream's slot run it. A failure of the passes fails its promises and is
/// thrown.
void prepare_launch(Launch& launch) {
  support::trace::Span span("prepare", "evaluation");
  span.arg("number", static_cast<int64_t>(launch.record.number));
  try {
    launch.origin = passes::PlanCache::origin_of(*launch.lookup);
    launch.context = plan_cache().complete(
        std::move(*launch.lookup),
        [&launch](passes::PassContext& context) { launch.manager->run(context); });
  } catch (const std::exception& error) {
    if (launch.settings.log_level != LogLevel::Off) {
      std::fprintf(stderr, "[lazuli] evaluation %llu: %s at %s failed: %s\n",
                   static_cast<unsigned long long>(launch.record.number),
                   evaluation_reason_name(launch.record.reason), launch.record.location.c_str(),
                   error.what());
    }
    set_latest_record(launch.record);
    launch.abandon(std::current_exception());
    throw;
  }
  launch.lookup.reset();
  EvaluationRecord& record = launch.record;
  const passes::PassContext& context = launch.context;
  record.kernels =
      context.fusion ? static_cast<int64_t>(context.fusion->kernels.size()) : record.nodes;
  record.prepare_milliseconds =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - launch.started)
          .count();
  log_launch(launch.settings, launch, launch.plan, launch.manager ? &*launch.manager : nullptr);
  set_latest_record(record);
  launch.prepared->set();
}

}  // namespace

std::vector<std::shared_ptr<Launch>> launch_kept(ir::Graph graph, ir::Wiring wiring,
                                                 EvaluationReason reason, std::source_location loc,
                                                 bool claim) {
  const KeptResults kept = results_to_keep(graph, wiring);
  const std::vector<bool>& keep = kept.keep;
  for (ir::Node* node : kept.left) node->left_pending = true;
  std::vector<std::pair<Device, std::vector<ir::NodePtr>>> by_device;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const ir::NodePtr& node = graph.nodes[i];
    if (!keep[i] || node->is_evaluated()) continue;
    auto group = std::find_if(by_device.begin(), by_device.end(),
                              [&](const auto& entry) { return entry.first == node->device; });
    if (group == by_device.end()) group = by_device.insert(by_device.end(), {node->device, {}});
    group->second.push_back(node);
  }
  std::vector<std::shared_ptr<Launch>> launches;
  try {
    if (by_device.size() == 1 && only_kept_results_need(graph, wiring, keep)) {
      // The graph collected from the kept results would have the same nodes: launch this one.
      auto& [device, outputs] = by_device.front();
      wiring.outputs.clear();
      for (size_t i = 0; i < graph.nodes.size(); ++i) {
        if (keep[i] && !graph.nodes[i]->is_evaluated()) {
          wiring.outputs.push_back(static_cast<int32_t>(i));
        }
      }
      graph.outputs = std::move(outputs);
      launches.push_back(launch(std::move(graph), wiring, device, reason, loc, claim,
                                static_cast<int64_t>(kept.left.size())));
    } else {
      for (auto& [device, outputs] : by_device) {
        // Only pending nodes of this device are reached: ops never mix devices, and a tensor
        // moved with to() is a data leaf on the other side. (Scalar constants have no device of
        // their own and are computed wherever they are used.)
        ir::Wiring device_wiring;
        ir::Graph device_graph = ir::Graph::collect(outputs, &device_wiring);
        launches.push_back(launch(std::move(device_graph), device_wiring, device, reason, loc,
                                  claim && by_device.size() == 1,
                                  static_cast<int64_t>(kept.left.size())));
      }
    }
  } catch (...) {
    // The devices launched already hold stream slots: they fail, so that no slot waits forever.
    for (const std::shared_ptr<Launch>& launched : launches) {
      launched->abandon(std::current_exception());
      if (launched->claimed) stream_of(*launched).release();
    }
    throw;
  }
  return launches;
}

void finish_launches(std::vector<std::shared_ptr<Launch>> launches) {
  std::exception_ptr failure;
  for (const std::shared_ptr<Launch>& launched : launches) {
    try {
      prepare_launch(*launched);
    } catch (...) {
      if (!failure) failure = std::current_exception();
    }
  }
  for (const std::shared_ptr<Launch>& launched : launches) {
    if (!launched->claimed) continue;
    if (!launched->done->is_set()) run_launch(*launched);
    stream_of(*launched).release();
  }
  if (failure) std::rethrow_exception(failure);
}

void wait_for_room(std::source_location loc) { in_flight().wait_for_room(loc); }

void forget_failure(const std::exception_ptr& error) { unreported_failures().forget(error); }

std::exception_ptr take_earliest_failure() { return unreported_failures().take_earliest(); }

EvaluationRecord last_launch_record() {
  EvaluationRecord record;
  {
    LatestRecord& latest = latest_record();
    std::lock_guard lock(latest.mutex);
    record = latest.record;
  }
  FinishedEvaluation& finished = last_finished();
  std::lock_guard lock(finished.mutex);
  if (finished.number == record.number) record.milliseconds = finished.milliseconds;
  return record;
}

std::string location_string(std::source_location loc) {
  // operator<< cannot capture its caller's location; it passes a default-constructed one.
  if (loc.file_name()[0] == '\0') return "operator<<";
  return std::string(loc.file_name()) + ":" + std::to_string(loc.line());
}

}  // namespace lz::frontend
