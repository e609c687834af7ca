#include "runtime/cuda/kernel_runner.h"

#include <chrono>
#include <map>
#include <mutex>
#include <string>

#include "codegen/cuda/nvrtc.h"
#include "codegen/cuda/program_cache.h"
#include "lazuli/error.h"
#include "plan/kernel_signature.h"
#include "runtime/cuda/cublas_matmul.h"
#include "runtime/cuda/device.h"
#include "runtime/cuda/launch_config.h"
#include "runtime/cuda/memory.h"
#include "support/statistics.h"
#include "support/trace.h"

namespace lz::runtime::cuda {
namespace {

/// A kernel's entries loaded on one device.
struct LoadedKernel {
  std::string name;  // lz_<hash>: its entries' prefix
  codegen::cuda::CudaKernelSource source;
  std::vector<CUfunction> functions;  // one per entry
};

/// Kernels loaded per device, by exact key: a new scalar, seed or (flat kernels) size reuses
/// the code, as on the CPU. A miss finds the program on disk or compiles it
/// (codegen/cuda/program_cache.h).
class KernelCache {
 public:
  /// The loaded kernel; a miss fills the report's compile fields. With `dump`, the report also
  /// gets the source, PTX and cubin (compiling again on a hit).
  const LoadedKernel& find_or_compile(CudaDevice& device, const plan::Kernel& kernel,
                                      const std::string& cache_directory, CudaKernelReport& report,
                                      bool dump) {
    std::string scratch;
    const std::string& key = plan::cuda_key(kernel, scratch);
    const std::string architecture = device.properties().architecture();
    if (dump) {
      report.source =
          codegen::cuda::generate_cuda_source(kernel, codegen::cuda::program_name(kernel))
              .translation_unit();
      codegen::cuda::CompiledCuda compiled =
          codegen::cuda::compile_cuda(report.source, architecture, /*want_ptx=*/true);
      report.ptx = std::move(compiled.ptx);
      report.cubin = std::move(compiled.cubin);
    }
    const std::pair<int, std::string> slot{device.ordinal(), key};
    {
      std::lock_guard lock(mutex_);
      if (auto found = kernels_.find(slot); found != kernels_.end()) {
        support::counters().cache_hits.fetch_add(1, std::memory_order_relaxed);
        report.name = found->second->name;
        return *found->second;
      }
    }
    // Compiled outside the lock, so that launches of cached kernels never wait behind NVRTC;
    // two threads missing the same kernel at once both compile it, and the first one is kept.
    support::trace::Span span("compile", "find or compile cuda kernel");
    const auto start = std::chrono::steady_clock::now();
    codegen::cuda::CudaProgram program =
        codegen::cuda::find_or_compile_program(kernel, architecture, cache_directory);
    auto made = std::make_unique<LoadedKernel>();
    made->name = program.name;
    made->source = std::move(program.source);
    const CUmodule module = device.load_module(program.image.data());
    for (const codegen::cuda::CudaEntry& entry : made->source.entries) {
      made->functions.push_back(device.function(module, entry.symbol));
    }
    report.name = made->name;
    report.compiled = !program.from_disk;
    report.from_disk = program.from_disk;
    report.compile_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    std::lock_guard lock(mutex_);
    return *kernels_.try_emplace(slot, std::move(made)).first->second;
  }

 private:
  std::mutex mutex_;
  std::map<std::pair<int, std::string>, std::unique_ptr<LoadedKernel>> kernels_;
};

KernelCache& kernel_cache() {
  static auto* cache = new KernelCache();  // never destroyed: launches may run at exit
  return *cache;
}

std::string op_of(const plan::Kernel& kernel) {
  return std::string(ir::op_name(kernel.nodes.back()->op));
}

}  // namespace

std::vector<std::shared_ptr<memory::Buffer>> run_cuda_kernel(
    const plan::Kernel& kernel, std::span<const memory::Buffer* const> inputs, int device_index,
    int stream, const std::string& cache_directory, CudaKernelReport& report, bool dump) {
  const std::string op = op_of(kernel);
  CudaDevice& device = cuda_device(device_index);
  device.make_current();  // this thread may never have called the driver for this device

  // Parameter values in ABI order (inputs, then outputs); each entry passes pointers to them.
  std::vector<uint64_t> buffers;
  for (const memory::Buffer* input : inputs)
    buffers.push_back(read_address(device, stream, *input, op));
  std::vector<std::shared_ptr<memory::Buffer>> outputs;
  std::vector<CudaMemory*> output_memory;
  for (const ir::NodePtr& output : kernel.outputs) {
    const int64_t bytes = output->size() * dtype_size(output->dtype);
    auto memory = std::make_unique<CudaMemory>(device, bytes, stream, op);
    buffers.push_back(memory->address());
    output_memory.push_back(memory.get());
    outputs.push_back(memory::Buffer::on_device(output->dtype, output->size(), std::move(memory)));
  }
  // Fusion keeps each matmul a kernel of its own (with the transposes it reads in place), for
  // cuBLAS; its epilogue is the next kernel.
  if (!codegen::cuda::is_cuda_compilable(kernel)) {
    const ir::Node& node = *kernel.nodes.back();
    if (!plan::is_matmul_kernel(kernel)) {
      throw Error("[" + op + "] has no CUDA code generator form");
    }
    // x @ x reads one input twice: find each operand among the kernel's inputs.
    const auto operand = [&](int i) {
      const plan::MatmulOperand found = plan::matmul_operand(kernel, i);
      return CublasOperand{buffers[static_cast<size_t>(found.input)], found.transposed};
    };
    cublas_matmul(device, stream, node, operand(0), operand(1), buffers[kernel.inputs.size()]);
    mark_written(device, stream, output_memory);
    report.name = "cuBLAS";
    return outputs;
  }
  const LoadedKernel& loaded =
      kernel_cache().find_or_compile(device, kernel, cache_directory, report, dump);
  const CUstream cuda_stream = device.stream(stream);
  const std::vector<uint64_t> scalars = plan::kernel_scalars(kernel, plan::exact_sizes(kernel));
  std::unique_ptr<CudaMemory> workspace;
  int64_t partial_blocks = 0;
  const int multiprocessors = device.properties().multiprocessors;

  for (size_t e = 0; e < loaded.source.entries.size(); ++e) {
    const codegen::cuda::CudaEntry& entry = loaded.source.entries[e];
    int64_t count = entry.kind == codegen::cuda::CudaEntry::Kind::Finish ? partial_blocks
                    : entry.fixed_count >= 0
                        ? entry.fixed_count
                        : kernel.nodes[static_cast<size_t>(entry.range_node)]->size();
    const int64_t blocks = grid_blocks(entry, count, multiprocessors);
    if (entry.kind == codegen::cuda::CudaEntry::Kind::Partial) partial_blocks = blocks;
    if (blocks == 0) continue;
    if (entry.uses_workspace && workspace == nullptr) {
      const int64_t words = (1 + std::max<int64_t>(partial_blocks, 1)) * loaded.source.state_slots;
      workspace = std::make_unique<CudaMemory>(device, words * 8, stream, op);
    }
    std::vector<void*> parameters;
    for (uint64_t& address : buffers) parameters.push_back(&address);
    uint64_t workspace_address = workspace != nullptr ? workspace->address() : 0;
    if (entry.uses_workspace) parameters.push_back(&workspace_address);
    parameters.push_back(&count);
    std::vector<uint64_t> scalar_values = scalars;
    for (uint64_t& scalar : scalar_values) parameters.push_back(&scalar);
    ++report.entries_launched;
    device.launch(loaded.functions[e], static_cast<unsigned>(blocks),
                  static_cast<unsigned>(codegen::cuda::kCudaBlockSize), parameters.data(),
                  cuda_stream, op.c_str());
  }
  mark_written(device, stream, output_memory);
  return outputs;
}

}  // namespace lz::runtime::cuda
