#include "runtime/cpu/matmul_kernel.h"

#include <chrono>
#include <cstdio>
#include <optional>
#include <string>

#include "plan/kernel_signature.h"
#include "runtime/cpu/blas_matmul.h"
#include "runtime/cpu/compiled_kernel.h"
#include "runtime/kernel_outputs.h"
#include "runtime/kernel_reporting.h"

namespace lz::runtime {
namespace {

using BufferPtr = std::shared_ptr<memory::Buffer>;

/// "(131072,128) x (128,128) (transposed)": a matmul kernel's operands as BLAS reads them.
std::string matmul_operands_text(const plan::Kernel& kernel) {
  const ir::Node& node = *kernel.nodes.back();
  const plan::MatmulOperand a = plan::matmul_operand(kernel, 0);
  const plan::MatmulOperand b = plan::matmul_operand(kernel, 1);
  return shape_string(node.inputs[0]->shape) + (a.transposed ? " (transposed)" : "") + " x " +
         shape_string(node.inputs[1]->shape) + (b.transposed ? " (transposed)" : "");
}

}  // namespace

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

bool run_with_epilogue(const plan::Kernel& matmul, const plan::Kernel& epilogue, bool keep_product,
                       const ExecutionOptions& options, const HostBufferOf& host_buffer_of,
                       const std::vector<BufferPtr>& dying,
                       std::unordered_map<const ir::Node*, BufferPtr>& written) {
  const ir::Node& product = *matmul.nodes.back();
  if (!is_floating(product.dtype) || !plan::is_compilable(epilogue)) return false;
  const plan::WrittenOver written_over = outputs_over_dying_inputs(epilogue, dying);
  std::optional<codegen::KernelLookup> lookup;
  try {
    lookup = compiled_code(epilogue, options, written_over);
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
    outputs = allocate_outputs(epilogue, written_over, dying);
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

}  // namespace lz::runtime
