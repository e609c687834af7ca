#include "runtime/kernel_executor.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "codegen/cpu/kernel_cache.h"
#include "ir/printer.h"
#include "lazuli/error.h"
#include "plan/fusion_plan.h"
#include "plan/kernel_signature.h"
#include "plan/unsupported_kernel.h"
#include "reference/interpreter.h"
#include "runtime/collectives.h"
#include "runtime/cpu/blas_matmul.h"
#include "runtime/cuda/kernel_runner.h"
#include "runtime/thread_pool.h"
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

[[noreturn]] void fail_out_of_memory(const ir::Node& node) {
  const auto bytes = static_cast<long long>(node.size()) * dtype_size(node.dtype);
  throw ir::recorded_error(node, "out of memory computing " +
                                     ir::type_text(node.dtype, node.shape) + " (" +
                                     std::to_string(bytes) + " bytes)");
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

double milliseconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

void write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

/// Elements of work below which a chunk is not worth handing to another thread.
constexpr int64_t kParallelGrain = 1 << 15;

/// How a compiled kernel holds its sizes, in its log line (by plan::Sizes).
constexpr const char* kSizesLogNames[] = {" flat", "", " runtime-sizes"};

/// Runs a split reduction's Partial phase over chunks of its range on the thread pool and
/// combines their states in the order of the chunks, so the result does not depend on which
/// thread finished first.
std::vector<uint64_t> combined_partial_states(const codegen::LoadedPhase& partial,
                                              std::vector<void*>& pointers,
                                              const std::vector<uint64_t>& scalars, int64_t count,
                                              int64_t grain) {
  const size_t slots = 2 * partial.description.reductions.size();
  std::mutex mutex;
  std::vector<std::pair<int64_t, std::vector<uint64_t>>> chunks;  // by first position
  parallel_for(count, grain, [&](int64_t begin, int64_t end) {
    std::vector<uint64_t> chunk(slots);
    partial.function(pointers.data(), scalars.data(), begin, end, chunk.data());
    std::lock_guard lock(mutex);
    chunks.emplace_back(begin, std::move(chunk));
  });
  if (chunks.empty()) {  // no elements: the identities
    std::vector<uint64_t> empty(slots);
    partial.function(pointers.data(), scalars.data(), 0, 0, empty.data());
    return empty;
  }
  std::sort(chunks.begin(), chunks.end());
  std::vector<uint64_t> combined = std::move(chunks.front().second);
  for (size_t i = 1; i < chunks.size(); ++i) {
    codegen::combine_reduction_states(partial.description.reductions, combined.data(),
                                      chunks[i].second.data());
  }
  return combined;
}

/// Allocates a buffer for each of `kernel`'s outputs; running out of memory names the output.
std::vector<BufferPtr> allocate_outputs(const plan::Kernel& kernel) {
  std::vector<BufferPtr> outputs;
  for (const ir::NodePtr& output : kernel.outputs) {
    try {
      outputs.push_back(memory::Buffer::allocate(output->dtype, output->size()));
    } catch (const std::bad_alloc&) {
      fail_out_of_memory(*output);
    }
  }
  return outputs;
}

/// "(131072,128) x (128,128) (transposed)": a matmul kernel's operands as BLAS reads them.
std::string matmul_operands_text(const plan::Kernel& kernel) {
  const ir::Node& node = *kernel.nodes.back();
  const plan::MatmulOperand a = plan::matmul_operand(kernel, 0);
  const plan::MatmulOperand b = plan::matmul_operand(kernel, 1);
  return shape_string(node.inputs[0]->shape) + (a.transposed ? " (transposed)" : "") + " x " +
         shape_string(node.inputs[1]->shape) + (b.transposed ? " (transposed)" : "");
}

/// Runs a kernel that is one call to a library (a float matmul through BLAS, reading transposed
/// operands in place); returns false for any other kernel.
bool run_external(const plan::Kernel& kernel, const ExecutionOptions& options,
                  const std::vector<const memory::Buffer*>& inputs,
                  std::vector<BufferPtr>& outputs) {
  const ir::Node& node = *kernel.nodes.back();
  if (!plan::is_matmul_kernel(kernel) || !is_floating(node.dtype)) return false;
  const auto start = std::chrono::steady_clock::now();
  std::vector<BufferPtr> results = allocate_outputs(kernel);
  // The kernel lists each input once: matmul(x, x) has one.
  const plan::MatmulOperand a = plan::matmul_operand(kernel, 0);
  const plan::MatmulOperand b = plan::matmul_operand(kernel, 1);
  if (!blas_matmul(node, *inputs[a.input], a.transposed, *inputs[b.input], b.transposed,
                   *results[0])) {
    return false;
  }
  outputs = std::move(results);
  if (options.log_level != LogLevel::Off) {
    std::fprintf(stderr, "[lazuli]   kernel %d: BLAS matmul %s run=%.3fms\n", kernel.id,
                 matmul_operands_text(kernel).c_str(), milliseconds_since(start));
  }
  return true;
}

/// The compiled code of `kernel`, its IR and assembly written under LZ_DUMP; nullopt (logged)
/// when the JIT cannot lower it.
std::optional<codegen::KernelLookup> compiled_code(const plan::Kernel& kernel,
                                                   const ExecutionOptions& options) {
  codegen::KernelDump dump;
  const bool dumping = !options.dump_directory.empty();
  codegen::KernelLookup lookup;
  try {
    support::trace::Span span("compile", "find or compile kernel");
    span.arg("kernel", static_cast<int64_t>(kernel.id));
    lookup = codegen::find_or_compile(kernel, options.cache_directory, dumping ? &dump : nullptr);
    span.arg("source", codegen::kernel_source_name(lookup.source));
  } catch (const plan::UnsupportedKernel& reason) {
    if (options.log_level != LogLevel::Off) {
      std::fprintf(stderr, "[lazuli]   kernel %d: interpreted (%s)\n", kernel.id, reason.what());
    }
    return std::nullopt;
  }
  if (!lookup.disk_problem.empty() && options.log_level != LogLevel::Off) {
    std::fprintf(stderr, "[lazuli]   kernel %d: kernel cache: %s; compiled again and replaced\n",
                 kernel.id, lookup.disk_problem.c_str());
  }
  if (dumping) {
    const std::filesystem::path stem =
        std::filesystem::path(options.dump_directory) /
        ("kernel" + std::to_string(kernel.id) + "." + lookup.kernel->name);
    std::filesystem::create_directories(options.dump_directory);
    write_file(stem.string() + ".before_opt.ll", dump.ir_before);
    write_file(stem.string() + ".after_opt.ll", dump.ir_after);
    write_file(stem.string() + ".s", dump.assembly);
  }
  return lookup;
}

/// "lz_1234: memory runtime-sizes elements=16 inputs=2 outputs=1 ops=3 compile=0.000ms": a
/// compiled kernel in the log.
std::string compiled_kernel_text(const plan::Kernel& kernel, const codegen::KernelLookup& lookup) {
  char text[256];
  std::snprintf(text, sizeof text,
                "%s: %s%s elements=%lld inputs=%zu outputs=%zu ops=%zu "
                "compile=%.3fms",
                lookup.kernel->name.c_str(), codegen::kernel_source_name(lookup.source),
                kSizesLogNames[static_cast<int>(lookup.kernel->sizes)],
                static_cast<long long>(kernel.nodes.back()->size()), kernel.inputs.size(),
                kernel.outputs.size(), kernel.nodes.size(), lookup.times.total());
  return text;
}

void log_compile_times(const codegen::KernelLookup& lookup, const ExecutionOptions& options) {
  if (options.log_level == LogLevel::Debug && lookup.source != codegen::KernelSource::Memory) {
    std::fprintf(stderr,
                 "[lazuli]     compile: lowering %.3fms, optimization %.3fms, code generation "
                 "%.3fms, loading %.3fms\n",
                 lookup.times.lowering, lookup.times.optimization, lookup.times.code_generation,
                 lookup.times.loading);
  }
}

/// Runs `kernel` through its compiled code; returns false when the JIT cannot lower it.
bool run_compiled(const plan::Kernel& kernel, const ExecutionOptions& options,
                  const std::vector<const memory::Buffer*>& inputs,
                  std::vector<BufferPtr>& outputs) {
  const std::optional<codegen::KernelLookup> lookup = compiled_code(kernel, options);
  if (!lookup) return false;
  const codegen::CompiledKernel& compiled = *lookup->kernel;
  const auto start = std::chrono::steady_clock::now();
  std::vector<void*> pointers;
  for (const memory::Buffer* input : inputs) pointers.push_back(const_cast<void*>(input->data()));
  outputs = allocate_outputs(kernel);
  for (const BufferPtr& output : outputs) pointers.push_back(output->data());
  const std::vector<uint64_t> scalars = plan::kernel_scalars(kernel, compiled.sizes);
  std::vector<uint64_t> state;  // a split reduction's combined state, from Partial to Finish
  for (const codegen::LoadedPhase& loaded : compiled.phases) {
    const codegen::Phase& phase = loaded.description;
    const int64_t count = codegen::phase_positions(phase, kernel);
    const int64_t grain = std::max<int64_t>(
        1, kParallelGrain / std::max<int64_t>(1, codegen::phase_work_per_position(phase, kernel)));
    if (phase.kind == codegen::Phase::Kind::Partial) {
      state = combined_partial_states(loaded, pointers, scalars, count, grain);
      continue;
    }
    parallel_for(count, grain, [&](int64_t begin, int64_t end) {
      loaded.function(pointers.data(), scalars.data(), begin, end, state.data());
    });
  }
  if (options.log_level != LogLevel::Off) {
    std::fprintf(stderr, "[lazuli]   kernel %d %s run=%.3fms\n", kernel.id,
                 compiled_kernel_text(kernel, *lookup).c_str(), milliseconds_since(start));
  }
  log_compile_times(*lookup, options);
  return true;
}

/// Runs `matmul`, a matmul kernel, together with its epilogue (plan::Kernel::epilogue): BLAS
/// computes the product in blocks of rows, and each block goes through the epilogue's compiled
/// loop as soon as it is computed, while it is in cache. The product is written to a buffer only
/// when `keep_product` (another kernel or the user reads it). `host_buffer_of` gives a value's
/// buffer on the host. Returns false, having run neither, where they cannot run so (BLAS does not
/// take the product, the epilogue does not compile to one loop over the product's elements or
/// rows, or compiling it or allocating its outputs fails): each then runs on its own, and a
/// failure of the epilogue's fails only its outputs.
template <class HostBufferOf>
bool run_with_epilogue(const plan::Kernel& matmul, const plan::Kernel& epilogue, bool keep_product,
                       const ExecutionOptions& options, const HostBufferOf& host_buffer_of,
                       std::unordered_map<const ir::Node*, BufferPtr>& written) {
  const ir::Node& product = *matmul.nodes.back();
  if (!is_floating(product.dtype) || !plan::is_compilable(epilogue)) return false;
  std::optional<codegen::KernelLookup> lookup;
  try {
    lookup = compiled_code(epilogue, options);
  } catch (...) {
    return false;  // the epilogue fails at its own turn, not the product
  }
  if (!lookup) return false;
  const codegen::CompiledKernel& compiled = *lookup->kernel;
  if (compiled.phases.size() != 1) return false;
  const codegen::LoadedPhase& loop = compiled.phases[0];
  // The loop's positions are the product's elements (an elementwise epilogue) or its rows (one
  // with reductions over them, run once per row).
  const int64_t row_elements = product.shape.back();
  const int64_t positions = codegen::phase_positions(loop.description, epilogue);
  if (loop.description.kind != codegen::Phase::Kind::Loop ||
      loop.description.range != codegen::Phase::Range::Elements ||
      (positions != product.size() && positions * row_elements != product.size())) {
    return false;
  }
  const int64_t positions_per_row = positions == product.size() ? row_elements : 1;

  const auto start = std::chrono::steady_clock::now();
  // The product's own buffer first: running out of memory there fails the product.
  const BufferPtr product_buffer = keep_product ? allocate_outputs(matmul)[0] : nullptr;
  std::vector<BufferPtr> outputs;
  try {
    outputs = allocate_outputs(epilogue);
  } catch (...) {
    return false;  // the epilogue fails at its own turn, not the product
  }
  std::vector<void*> pointers;
  size_t product_slot = 0;
  for (size_t i = 0; i < epilogue.inputs.size(); ++i) {
    if (epilogue.inputs[i].get() == &product) {
      product_slot = i;
      pointers.push_back(nullptr);  // each block's own
    } else {
      pointers.push_back(const_cast<void*>(host_buffer_of(epilogue.inputs[i].get()).data()));
    }
  }
  for (const BufferPtr& output : outputs) pointers.push_back(output->data());
  const std::vector<uint64_t> scalars = plan::kernel_scalars(epilogue, compiled.sizes);
  const auto element_bytes = static_cast<uintptr_t>(dtype_size(product.dtype));
  const RowEpilogue run_on_rows = [&](const void* rows, int64_t first, int64_t count) {
    std::vector<void*> block_pointers = pointers;
    // The loop reads the product at its positions; the block holds those from first's row on.
    block_pointers[product_slot] =
        reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(rows) -
                                static_cast<uintptr_t>(first * row_elements) * element_bytes);
    loop.function(block_pointers.data(), scalars.data(), first * positions_per_row,
                  (first + count) * positions_per_row, nullptr);
  };
  const plan::MatmulOperand a = plan::matmul_operand(matmul, 0);
  const plan::MatmulOperand b = plan::matmul_operand(matmul, 1);
  if (!blas_matmul(product, host_buffer_of(matmul.inputs[a.input].get()), a.transposed,
                   host_buffer_of(matmul.inputs[b.input].get()), b.transposed, product_buffer.get(),
                   run_on_rows)) {
    return false;
  }
  if (keep_product) written[&product] = product_buffer;
  for (size_t i = 0; i < epilogue.outputs.size(); ++i) {
    written[epilogue.outputs[i].get()] = std::move(outputs[i]);
  }
  if (options.log_level != LogLevel::Off) {
    std::fprintf(stderr,
                 "[lazuli]   kernel %d: BLAS matmul %s%s, each block of rows through kernel %d "
                 "%s run=%.3fms\n",
                 matmul.id, matmul_operands_text(matmul).c_str(), keep_product ? " (kept)" : "",
                 epilogue.id, compiled_kernel_text(epilogue, *lookup).c_str(),
                 milliseconds_since(start));
  }
  log_compile_times(*lookup, options);
  return true;
}

/// Queues `kernel` on its CUDA device (runtime/cuda/kernel_runner.h); logs it under LZ_LOG and
/// writes its CUDA source, PTX, cubin and (with cuobjdump on the PATH) SASS under LZ_DUMP.
std::vector<BufferPtr> run_on_cuda(const plan::Kernel& kernel, const ExecutionOptions& options,
                                   const std::vector<const memory::Buffer*>& inputs) {
  const auto start = std::chrono::steady_clock::now();
  const bool dumping = !options.dump_directory.empty();
  cuda::CudaKernelReport report;
  std::vector<BufferPtr> results =
      cuda::run_cuda_kernel(kernel, inputs, options.device.index(), options.stream,
                            options.cache_directory, report, dumping);
  if (dumping && !report.source.empty()) {
    const std::filesystem::path stem = std::filesystem::path(options.dump_directory) /
                                       ("kernel" + std::to_string(kernel.id) + "." + report.name);
    std::filesystem::create_directories(options.dump_directory);
    write_file(stem.string() + ".cu", report.source);
    write_file(stem.string() + ".ptx", report.ptx);
    if (!report.cubin.empty()) {
      write_file(stem.string() + ".cubin", std::string(report.cubin.begin(), report.cubin.end()));
      // SASS is the GPU's own assembly; only the toolkit's cuobjdump can print it.
      const std::string command = "command -v cuobjdump >/dev/null 2>&1 && cuobjdump -sass '" +
                                  stem.string() + ".cubin' > '" + stem.string() + ".sass'";
      (void)std::system(command.c_str());
    }
  }
  if (options.log_level != LogLevel::Off) {
    std::fprintf(stderr,
                 "[lazuli]   kernel %d %s on %s stream %d: %s entries=%d elements=%lld ops=%zu "
                 "compile=%.3fms queue=%.3fms\n",
                 kernel.id, report.name.c_str(), options.device.name().c_str(), options.stream,
                 report.compiled    ? "compiled"
                 : report.from_disk ? "disk"
                                    : "memory",
                 report.entries_launched, static_cast<long long>(kernel.nodes.back()->size()),
                 kernel.nodes.size(), report.compile_ms,
                 milliseconds_since(start) - report.compile_ms);
  }
  return results;
}

/// Runs one kernel, compiled, through a library or interpreted, and puts its outputs into
/// `written`.
template <class BufferOf>
void run_kernel(const plan::Kernel& kernel, const ExecutionOptions& options,
                const BufferOf& buffer_of,
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
      run_compiled(kernel, options, inputs, results)) {
    for (size_t i = 0; i < kernel.outputs.size(); ++i) {
      written[kernel.outputs[i].get()] = std::move(results[i]);
    }
    return;
  }
  if (options.jit && run_external(kernel, options, inputs, results)) {
    written[kernel.outputs[0].get()] = std::move(results[0]);
    return;
  }
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

}  // namespace

std::vector<Outcome> execute_each(const ir::Graph& graph, const plan::FusionPlan* fusion,
                                  const ExecutionOptions& options) {
  const plan::FusionPlan unfused = fusion ? plan::FusionPlan{} : one_kernel_per_node(graph);
  const std::vector<plan::Kernel>& kernels = fusion ? fusion->kernels : unfused.kernels;

  // Values written out by kernels, freed once the last kernel reading them has run (graph
  // outputs are read once more at the end, so they stay), and the values that failed.
  std::unordered_map<const ir::Node*, BufferPtr> written;
  std::unordered_map<const ir::Node*, std::exception_ptr> failed;
  std::unordered_map<const ir::Node*, int> reads_left;
  for (const plan::Kernel& kernel : kernels) {
    for (const ir::NodePtr& input : kernel.inputs) ++reads_left[input.get()];
  }
  for (const ir::NodePtr& output : graph.outputs) ++reads_left[output.get()];

  const auto buffer_of = [&](const ir::Node* node,
                             const std::unordered_map<const ir::Node*, BufferPtr>& local) {
    if (node->is_evaluated()) return node->buffer.get();
    if (auto found = local.find(node); found != local.end()) return found->second.get();
    return written.at(node).get();
  };
  // The failure that keeps `node` from being read, once any work writing it has finished (a
  // collective's result is a promise that the communication thread keeps).
  const auto failure_of = [&](const ir::Node* node) -> std::exception_ptr {
    if (node->is_evaluated()) {
      node->buffer->wait();
      return node->buffer->error();
    }
    if (const auto found = failed.find(node); found != failed.end()) return found->second;
    if (const auto found = written.find(node); found != written.end()) {
      found->second->wait();
      return found->second->error();
    }
    return nullptr;
  };

  const auto host_buffer_of = [&](const ir::Node* node) -> const memory::Buffer& {
    return buffer_of(node, {})->host();
  };
  // Epilogues that ran with their matmul's product (plan::Kernel::epilogue), by position.
  std::vector<bool> ran_with_product(kernels.size(), false);
  // Whether the epilogue of `matmul` runs with its product: on the CPU, compiled, and with
  // every value it reads computed (a failed one fails it at its own turn).
  const auto epilogue_runs_with = [&](const plan::Kernel& matmul) {
    if (matmul.epilogue < 0 || !options.jit || options.device.kind() != Device::Kind::Cpu) {
      return false;
    }
    const plan::Kernel& epilogue = kernels[matmul.epilogue];
    const ir::Node* product = matmul.nodes.back().get();
    // The epilogue's own read of the product is one; the product is kept for any other.
    const bool keep_product = reads_left.at(product) > 1;
    for (const ir::NodePtr& input : epilogue.inputs) {
      if (input.get() != product && failure_of(input.get())) return false;
    }
    if (!run_with_epilogue(matmul, epilogue, keep_product, options, host_buffer_of, written)) {
      return false;
    }
    ran_with_product[matmul.epilogue] = true;
    return true;
  };

  // Fusion orders the kernels by their roots, so each runs after the kernels it reads.
  for (size_t position = 0; position < kernels.size(); ++position) {
    const plan::Kernel& kernel = kernels[position];
    if (ran_with_product[position]) {
      for (const ir::NodePtr& input : kernel.inputs) {
        if (--reads_left[input.get()] == 0) written.erase(input.get());
      }
      support::counters().kernels_launched.fetch_add(1, std::memory_order_relaxed);
      continue;
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
                                                  : written.at(operand);
      written[kernel.outputs[0].get()] =
          queue_collective(kernel.nodes.back(), std::move(input), error, options.log_level);
      error = nullptr;
    } else if (!error) {
      try {
        if (!epilogue_runs_with(kernel)) run_kernel(kernel, options, buffer_of, written);
      } catch (...) {
        error = attributed_to(kernel, std::current_exception());
      }
    }
    if (error) {
      for (const ir::NodePtr& output : kernel.outputs) failed[output.get()] = error;
    }
    for (const ir::NodePtr& input : kernel.inputs) {
      if (--reads_left[input.get()] == 0) written.erase(input.get());
    }
    support::counters().kernels_launched.fetch_add(1, std::memory_order_relaxed);
  }

  std::vector<Outcome> outcomes;
  outcomes.reserve(graph.outputs.size());
  for (const ir::NodePtr& output : graph.outputs) {
    if (std::exception_ptr error = failure_of(output.get())) {
      outcomes.push_back({nullptr, std::move(error)});
    } else {
      outcomes.push_back({output->is_evaluated() ? output->buffer : written.at(output.get()), {}});
    }
  }
  return outcomes;
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
