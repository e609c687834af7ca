#include "runtime/kernel_executor.h"

#include <algorithm>
#include <new>
#include <string>
#include <unordered_map>

#include "lazuli/error.h"
#include "plan/fusion_plan.h"
#include "reference/interpreter.h"
#include "runtime/collectives.h"
#include "runtime/cpu/compiled_kernel.h"
#include "runtime/cpu/matmul_kernel.h"
#include "runtime/cuda/kernel_dispatch.h"
#include "runtime/kernel_outputs.h"
#include "support/statistics.h"
#include "support/trace.h"

namespace lz::runtime {
namespace {

using BufferPtr = std::shared_ptr<memory::Buffer>;

/// Without fusion every computed node is a kernel of its own.
plan::FusionPlan one_kernel_per_node(const ir::Graph& graph) {
  plan::FusionPlan plan;
  for (const ir::NodePtr& node : graph.nodes) {
    if (node->is_evaluated()) continue;
    plan::Kernel kernel;
    kernel.id = static_cast<int>(plan.kernels.size());
    kernel.nodes = {node};
    kernel.inputs.assign(node->inputs.begin(), node->inputs.end());
    kernel.outputs = {node};
    plan.kernels.push_back(std::move(kernel));
  }
  return plan;
}

/// Interprets one node; running out of memory becomes an lz::Error naming the op and the line
/// of the user's code that recorded it.
BufferPtr compute(const ir::Node& node, std::span<const memory::Buffer* const> inputs) {
  try {
    return reference::interpret_node(node, inputs);
  } catch (const std::bad_alloc&) {
    fail_out_of_memory(node);
  }
}

/// Why neither the JIT nor a library runs `kernel` (not plan::is_compilable, and run_external
/// declined it).
std::string why_not_compiled(const plan::Kernel& kernel) {
  for (const ir::NodePtr& node : kernel.nodes) {
    if (node->op != ir::Op::MatMul) continue;
    if (!is_floating(node->dtype)) {
      return std::string(
                 "the JIT compiles no matmul, and BLAS multiplies only float32 and "
                 "float64 matrices, not ") +
             dtype_name(node->dtype);
    }
    return "the JIT compiles no matmul, and BLAS takes no matrix extent beyond 2^31 - 1";
  }
  return std::string("the JIT compiles no ") + std::string(ir::op_name(kernel.nodes.back()->op));
}

/// Runs one kernel, compiled, through a library or interpreted, and puts its outputs into
/// `written`; compiled, an output may be written over a `dying` input (run_compiled). Strict
/// (LZ_JIT=strict), a kernel the JIT refuses fails instead.
template <class BufferOf>
void run_kernel(const plan::Kernel& kernel, const ExecutionOptions& options,
                const BufferOf& buffer_of, const std::vector<BufferPtr>& dying,
                std::unordered_map<const ir::Node*, BufferPtr>& written) {
  support::trace::Span span("kernel", "run kernel");
  span.arg("kernel", static_cast<int64_t>(kernel.id));
  std::vector<const memory::Buffer*> inputs;
  for (const ir::NodePtr& input : kernel.inputs) {
    inputs.push_back(buffer_of(input.get(), std::unordered_map<const ir::Node*, BufferPtr>{}));
  }
  if (options.device.kind() == Device::Kind::Cuda) {
    std::vector<BufferPtr> results = run_on_cuda(kernel, options, inputs);
    for (size_t i = 0; i < kernel.outputs.size(); ++i) {
      written[kernel.outputs[i].get()] = std::move(results[i]);
    }
    return;
  }
  // A tensor moved from a CUDA device is read on the host.
  for (const memory::Buffer*& input : inputs) input = &input->host();
  std::vector<BufferPtr> results;
  if (options.jit && plan::is_compilable(kernel) &&
      run_compiled(kernel, options, inputs, dying, results)) {
    for (size_t i = 0; i < kernel.outputs.size(); ++i) {
      written[kernel.outputs[i].get()] = std::move(results[i]);
    }
    return;
  }
  if (options.jit && run_external(kernel, options, inputs, results)) {
    written[kernel.outputs[0].get()] = std::move(results[0]);
    return;
  }
  if (options.jit && options.jit_strict) {
    // A kernel the lowering refuses has already failed in run_compiled.
    throw refused_kernel_error(kernel, why_not_compiled(kernel));
  }
  support::counters().kernels_interpreted.fetch_add(1, std::memory_order_relaxed);
  std::unordered_map<const ir::Node*, BufferPtr> local;
  for (const ir::NodePtr& node : kernel.nodes) {
    inputs.clear();
    for (const ir::NodePtr& input : node->inputs) {
      inputs.push_back(&buffer_of(input.get(), local)->host());
    }
    local[node.get()] = compute(*node, inputs);
  }
  for (const ir::NodePtr& output : kernel.outputs) written[output.get()] = local.at(output.get());
}

/// `error` as an lz::Error that names an op and the line that recorded it: errors raised while
/// running a node already do; anything else is attributed to the kernel's last op.
std::exception_ptr attributed_to(const plan::Kernel& kernel, std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const Error& named) {
    if (named.location()) return error;
  } catch (...) {
  }
  std::string reason = "unknown failure";
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& failure) {
    reason = failure.what();
  } catch (...) {
  }
  return std::make_exception_ptr(ir::recorded_error(*kernel.nodes.back(), reason));
}

/// The outcomes of a graph whose last `skipped` kernels were cancelled: nothing could read it.
std::vector<Outcome> cancelled(const ir::Graph& graph, size_t skipped) {
  support::counters().kernels_cancelled.fetch_add(static_cast<int64_t>(skipped),
                                                  std::memory_order_relaxed);
  std::vector<Outcome> outcomes;
  outcomes.reserve(graph.outputs.size());
  for (const ir::NodePtr& output : graph.outputs) {
    outcomes.push_back({nullptr,
                        std::make_exception_ptr(ir::recorded_error(
                            *output, "cancelled: no tensor could read the result any more")),
                        true});
  }
  return outcomes;
}

/// One run of execute_each over `kernels`, in their order.
class Execution {
 public:
  Execution(const ir::Graph& graph, const std::vector<plan::Kernel>& kernels,
            const ExecutionOptions& options)
      : graph_(graph), kernels_(kernels), options_(options), ran_with_product_(kernels.size()) {
    for (const plan::Kernel& kernel : kernels) {
      for (const ir::NodePtr& input : kernel.inputs) ++reads_left_[input.get()];
    }
    for (const ir::NodePtr& output : graph.outputs) ++reads_left_[output.get()];
  }

  /// Runs the kernel at `position`, once those it reads have run: its failure fails only its
  /// outputs.
  void run(size_t position) {
    const plan::Kernel& kernel = kernels_[position];
    if (ran_with_product_[position]) {
      for (const ir::NodePtr& input : kernel.inputs) {
        if (--reads_left_[input.get()] == 0) written_.erase(input.get());
      }
      support::counters().kernels_launched.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    std::exception_ptr error;
    for (const ir::NodePtr& input : kernel.inputs) {
      if (!error) error = failure_of(input.get());
    }
    if (plan::is_collective_kernel(kernel)) {
      // Queued even when its operand failed, so that the other ranks learn it instead of waiting.
      const ir::Node* operand = kernel.inputs[0].get();
      BufferPtr input = error                     ? nullptr
                        : operand->is_evaluated() ? operand->buffer
                                                  : written_.at(operand);
      written_[kernel.outputs[0].get()] =
          queue_collective(kernel.nodes.back(), std::move(input), error, options_.log_level);
      error = nullptr;
    } else if (!error) {
      try {
        if (!epilogue_runs_with(kernel)) {
          run_kernel(
              kernel, options_,
              [this](const ir::Node* node, const auto& local) { return buffer_of(node, local); },
              dying_inputs(kernel), written_);
        }
      } catch (...) {
        error = attributed_to(kernel, std::current_exception());
      }
    }
    if (error) {
      for (const ir::NodePtr& output : kernel.outputs) failed_[output.get()] = error;
    }
    for (const ir::NodePtr& input : kernel.inputs) {
      if (--reads_left_[input.get()] == 0) written_.erase(input.get());
    }
    support::counters().kernels_launched.fetch_add(1, std::memory_order_relaxed);
  }

  /// One outcome per graph output, in order, once every kernel has run.
  std::vector<Outcome> outcomes() const {
    std::vector<Outcome> outcomes;
    outcomes.reserve(graph_.outputs.size());
    for (const ir::NodePtr& output : graph_.outputs) {
      if (std::exception_ptr error = failure_of(output.get())) {
        outcomes.push_back({nullptr, std::move(error)});
      } else {
        outcomes.push_back(
            {output->is_evaluated() ? output->buffer : written_.at(output.get()), {}});
      }
    }
    return outcomes;
  }

 private:
  /// The buffer of `node`: its own once evaluated, else computed by this kernel (`local`) or
  /// written out by an earlier one.
  const memory::Buffer* buffer_of(
      const ir::Node* node, const std::unordered_map<const ir::Node*, BufferPtr>& local) const {
    if (node->is_evaluated()) return node->buffer.get();
    if (auto found = local.find(node); found != local.end()) return found->second.get();
    return written_.at(node).get();
  }

  /// Per input of `kernel`, its memory when nothing can read it after `kernel` (no later kernel,
  /// no graph output, nothing outside the launch: memory::Buffer::exclusive_storage) and an
  /// output of its size may take it (ExecutionOptions::in_place_from_bytes); else null. Empty
  /// when no input qualifies or the kernel does not run on the CPU's compiled code.
  std::vector<BufferPtr> dying_inputs(const plan::Kernel& kernel) const {
    std::vector<BufferPtr> dying;  // allocated at the first input that qualifies: most kernels
                                   // have none, and this runs before every kernel
    if (options_.in_place_from_bytes < 0 || !options_.jit ||
        options_.device.kind() != Device::Kind::Cpu) {
      return dying;
    }
    for (size_t i = 0; i < kernel.inputs.size(); ++i) {
      const ir::Node* input = kernel.inputs[i].get();
      const int64_t bytes = input->size() * static_cast<int64_t>(dtype_size(input->dtype));
      if (bytes < options_.in_place_from_bytes || reads_left_.at(input) != 1) continue;
      BufferPtr storage;
      if (input->is_evaluated()) {
        storage = memory::Buffer::exclusive_storage(input->buffer);
      } else if (const auto found = written_.find(input); found != written_.end()) {
        storage = memory::Buffer::exclusive_storage(found->second);
      }  // else a matmul's product that its epilogue reads block by block
      if (storage == nullptr) continue;
      dying.resize(kernel.inputs.size());
      dying[i] = std::move(storage);
    }
    return dying;
  }

  /// The failure that keeps `node` from being read, once any work writing it has finished (a
  /// collective's result is a promise that the communication thread keeps).
  std::exception_ptr failure_of(const ir::Node* node) const {
    if (node->is_evaluated()) {
      node->buffer->wait();
      return node->buffer->error();
    }
    if (const auto found = failed_.find(node); found != failed_.end()) return found->second;
    if (const auto found = written_.find(node); found != written_.end()) {
      found->second->wait();
      return found->second->error();
    }
    return nullptr;
  }

  /// Whether the epilogue of `matmul` ran with its product: on the CPU, compiled, and with every
  /// value it reads computed (a failed one fails it at its own turn).
  bool epilogue_runs_with(const plan::Kernel& matmul) {
    if (matmul.epilogue < 0 || !options_.jit || options_.device.kind() != Device::Kind::Cpu) {
      return false;
    }
    const plan::Kernel& epilogue = kernels_[matmul.epilogue];
    const ir::Node* product = matmul.nodes.back().get();
    // The epilogue's own read of the product is one; the product is kept for any other.
    const bool keep_product = reads_left_.at(product) > 1;
    for (const ir::NodePtr& input : epilogue.inputs) {
      if (input.get() != product && failure_of(input.get())) return false;
    }
    const auto host_buffer_of = [this](const ir::Node* node) -> const memory::Buffer& {
      return buffer_of(node, {})->host();
    };
    if (!run_with_epilogue(matmul, epilogue, keep_product, options_, host_buffer_of,
                           dying_inputs(epilogue), written_)) {
      return false;
    }
    ran_with_product_[matmul.epilogue] = true;
    return true;
  }

  const ir::Graph& graph_;
  const std::vector<plan::Kernel>& kernels_;
  const ExecutionOptions& options_;
  // Values written out by kernels, freed once the last kernel reading them has run (graph
  // outputs are read once more at the end, so they stay), and the values that failed.
  std::unordered_map<const ir::Node*, BufferPtr> written_;
  std::unordered_map<const ir::Node*, std::exception_ptr> failed_;
  std::unordered_map<const ir::Node*, int> reads_left_;
  // Epilogues that ran with their matmul's product (plan::Kernel::epilogue), by position.
  std::vector<bool> ran_with_product_;
};

}  // namespace

std::vector<Outcome> execute_each(const ir::Graph& graph, const plan::FusionPlan* fusion,
                                  const ExecutionOptions& options) {
  const plan::FusionPlan unfused = fusion ? plan::FusionPlan{} : one_kernel_per_node(graph);
  const std::vector<plan::Kernel>& kernels = fusion ? fusion->kernels : unfused.kernels;
  const bool cancellable =
      options.unread && std::none_of(kernels.begin(), kernels.end(), plan::is_collective_kernel);
  Execution execution(graph, kernels, options);
  // Fusion orders the kernels by their roots, so each runs after the kernels it reads.
  for (size_t position = 0; position < kernels.size(); ++position) {
    if (cancellable && options.unread()) return cancelled(graph, kernels.size() - position);
    execution.run(position);
  }
  return execution.outcomes();
}

std::vector<BufferPtr> execute(const ir::Graph& graph, const plan::FusionPlan* fusion,
                               const ExecutionOptions& options) {
  std::vector<BufferPtr> buffers;
  for (Outcome& outcome : execute_each(graph, fusion, options)) {
    if (outcome.error) std::rethrow_exception(outcome.error);
    buffers.push_back(std::move(outcome.buffer));
  }
  return buffers;
}

}  // namespace lz::runtime
