#include "runtime/cpu/compiled_kernel.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <utility>

#include "ir/node.h"
#include "ir/op.h"
#include "plan/kernel_signature.h"
#include "plan/unsupported_kernel.h"
#include "runtime/kernel_outputs.h"
#include "runtime/kernel_reporting.h"
#include "runtime/thread_pool.h"
#include "support/dump_files.h"
#include "support/trace.h"

namespace lz::runtime {
namespace {

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

}  // namespace

Error refused_kernel_error(const plan::Kernel& kernel, const std::string& why) {
  constexpr size_t kOpsNamed = 8;
  std::string ops;
  for (size_t i = 0; i < kernel.nodes.size() && i < kOpsNamed; ++i) {
    ops += (i ? ", " : "") + std::string(ir::op_name(kernel.nodes[i]->op));
  }
  if (kernel.nodes.size() > kOpsNamed) {
    ops += " and " + std::to_string(kernel.nodes.size() - kOpsNamed) + " more";
  }
  const ir::Node& root = *kernel.nodes.back();
  return ir::recorded_error(
      root, "kernel " + std::to_string(kernel.id) + " (ops: " + ops +
                "; result: " + dtype_name(root.dtype) + " " + shape_string(root.shape) +
                ") is not compiled: " + why +
                "; LZ_JIT=strict fails such a kernel instead of interpreting it (LZ_JIT=1 "
                "interprets it, saying so under LZ_LOG=info)");
}

std::optional<codegen::KernelLookup> compiled_code(const plan::Kernel& kernel,
                                                   const ExecutionOptions& options,
                                                   const plan::WrittenOver& written_over) {
  codegen::KernelDump dump;
  const bool dumping = !options.dump_directory.empty();
  codegen::KernelLookup lookup;
  try {
    support::trace::Span span("compile", "find or compile kernel");
    span.arg("kernel", static_cast<int64_t>(kernel.id));
    lookup = codegen::find_or_compile(kernel, options.cache_directory, dumping ? &dump : nullptr,
                                      written_over);
    span.arg("source", codegen::kernel_source_name(lookup.source));
  } catch (const plan::UnsupportedKernel& reason) {
    if (options.jit_strict) {
      throw refused_kernel_error(kernel, std::string("the JIT refuses ") + reason.what());
    }
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
    // Each stops at the first failure, which turns dumping off.
    (void)(support::make_dump_folder(options.dump_directory) &&
           support::write_dump_file(stem.string() + ".before_opt.ll", dump.ir_before) &&
           support::write_dump_file(stem.string() + ".after_opt.ll", dump.ir_after) &&
           support::write_dump_file(stem.string() + ".s", dump.assembly));
  }
  return lookup;
}

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

plan::WrittenOver outputs_over_dying_inputs(
    const plan::Kernel& kernel, const std::vector<std::shared_ptr<memory::Buffer>>& dying) {
  plan::WrittenOver written_over;
  if (std::none_of(dying.begin(), dying.end(), [](const auto& buffer) { return buffer; })) {
    return written_over;
  }
  // Per input: whether an output may take it, once it is known to be read index-aligned (a walk
  // of the kernel, made once per input); false once taken.
  std::vector<bool> available(dying.size());
  for (size_t i = 0; i < dying.size(); ++i) {
    available[i] = dying[i] && plan::reads_index_aligned(kernel, *kernel.inputs[i]);
  }
  for (size_t o = 0; o < kernel.outputs.size(); ++o) {
    const ir::Node& output = *kernel.outputs[o];
    for (size_t i = 0; i < dying.size(); ++i) {
      const ir::Node& input = *kernel.inputs[i];
      if (!available[i] || input.dtype != output.dtype || input.size() != output.size()) continue;
      written_over.resize(kernel.outputs.size(), -1);
      written_over[o] = static_cast<int>(i);
      available[i] = false;
      break;
    }
  }
  return written_over;
}

bool run_compiled(const plan::Kernel& kernel, const ExecutionOptions& options,
                  const std::vector<const memory::Buffer*>& inputs,
                  const std::vector<std::shared_ptr<memory::Buffer>>& dying,
                  std::vector<std::shared_ptr<memory::Buffer>>& outputs) {
  const plan::WrittenOver written_over = outputs_over_dying_inputs(kernel, dying);
  const std::optional<codegen::KernelLookup> lookup = compiled_code(kernel, options, written_over);
  if (!lookup) return false;
  const codegen::CompiledKernel& compiled = *lookup->kernel;
  const auto start = std::chrono::steady_clock::now();
  std::vector<void*> pointers;
  for (const memory::Buffer* input : inputs) pointers.push_back(const_cast<void*>(input->data()));
  outputs = allocate_outputs(kernel, written_over, dying);
  for (const std::shared_ptr<memory::Buffer>& output : outputs) pointers.push_back(output->data());
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

}  // namespace lz::runtime
