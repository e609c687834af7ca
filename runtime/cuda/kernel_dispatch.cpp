#include "runtime/cuda/kernel_dispatch.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "runtime/cuda/kernel_runner.h"
#include "runtime/kernel_reporting.h"
#include "support/dump_files.h"

namespace lz::runtime {

std::vector<std::shared_ptr<memory::Buffer>> run_on_cuda(
    const plan::Kernel& kernel, const ExecutionOptions& options,
    const std::vector<const memory::Buffer*>& inputs) {
  const auto start = std::chrono::steady_clock::now();
  const bool dumping = !options.dump_directory.empty();
  cuda::CudaKernelReport report;
  std::vector<std::shared_ptr<memory::Buffer>> results =
      cuda::run_cuda_kernel(kernel, inputs, options.device.index(), options.stream,
                            options.cache_directory, report, dumping);
  if (dumping && !report.source.empty()) {
    const std::filesystem::path stem = std::filesystem::path(options.dump_directory) /
                                       ("kernel" + std::to_string(kernel.id) + "." + report.name);
    const bool written = support::make_dump_folder(options.dump_directory) &&
                         support::write_dump_file(stem.string() + ".cu", report.source) &&
                         support::write_dump_file(stem.string() + ".ptx", report.ptx);
    if (written && !report.cubin.empty() &&
        support::write_dump_file(stem.string() + ".cubin",
                                 std::string_view(report.cubin.data(), report.cubin.size()))) {
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

}  // namespace lz::runtime
