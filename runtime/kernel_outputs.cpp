#include "runtime/kernel_outputs.h"

#include <new>
#include <string>

#include "ir/printer.h"
#include "support/statistics.h"

namespace lz::runtime {

[[noreturn]] void fail_out_of_memory(const ir::Node& node) {
  const auto bytes = static_cast<long long>(node.size()) * dtype_size(node.dtype);
  throw ir::recorded_error(node, "out of memory computing " +
                                     ir::type_text(node.dtype, node.shape) + " (" +
                                     std::to_string(bytes) + " bytes)");
}

std::vector<std::shared_ptr<memory::Buffer>> allocate_outputs(
    const plan::Kernel& kernel, const plan::WrittenOver& written_over,
    const std::vector<std::shared_ptr<memory::Buffer>>& dying) {
  std::vector<std::shared_ptr<memory::Buffer>> outputs;
  for (size_t i = 0; i < kernel.outputs.size(); ++i) {
    const ir::NodePtr& output = kernel.outputs[i];
    if (i < written_over.size() && written_over[i] >= 0) {
      outputs.push_back(dying[written_over[i]]);
      support::counters().outputs_written_in_place.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    try {
      outputs.push_back(memory::Buffer::allocate(output->dtype, output->size()));
    } catch (const std::bad_alloc&) {
      fail_out_of_memory(*output);
    }
  }
  return outputs;
}

}  // namespace lz::runtime
