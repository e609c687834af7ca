#include "codegen/kernel_layout.h"

#include <string>

#include "codegen/kernel_signature.h"
#include "codegen/unsupported_kernel.h"
#include "ir/op.h"

namespace lz::codegen {

KernelLayout::KernelLayout(const passes::Kernel& kernel) {
  for (size_t i = 0; i < kernel.nodes.size(); ++i) {
    const ir::Node* node = kernel.nodes[i].get();
    position[node] = static_cast<int>(i);
    scalar_slot[node] = scalar_count;
    scalar_count += scalar_slot_count(node->op);
    const bool reduction = ir::op_info(node->op).kind == ir::OpKind::Reduction;
    if (reduction) reductions.push_back(node);
    bool depends = reduction;
    for (const ir::NodePtr& input : node->inputs) {
      depends = depends || depends_on_reduction.contains(input.get());
    }
    if (depends) depends_on_reduction.insert(node);
  }
  for (const ir::NodePtr& output : kernel.outputs) outputs.push_back(output.get());
}

void KernelLayout::check_separate_output(const ir::Node* output) const {
  if (depends_on_reduction.contains(output)) {
    throw UnsupportedKernel("output %" + std::to_string(position.at(output)) +
                            " depends on a reduction but is neither shaped like its result nor "
                            "like its input");
  }
}

}  // namespace lz::codegen
