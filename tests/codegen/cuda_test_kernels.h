// What the CUDA code generator's tests (cuda_codegen_test.cpp, cuda_emulation_test.cpp) generate
// kernels from: the fused kernels of a graph or of recorded tensors, and the tensors they record.
#pragma once

#include <cstdint>
#include <vector>

#include <lazuli/lazuli.h>

#include "ir/clone.h"
#include "ir/graph.h"
#include "passes/pass.h"
#include "passes/pass_manager.h"
#include "plan/fusion_plan.h"

namespace lz::codegen::test {

/// The fused kernels of `graph` after the default pipeline (the nodes stay alive with them).
inline std::vector<plan::Kernel> kernels_of_graph(const ir::Graph& graph,
                                                  passes::PassOptions options = {}) {
  passes::PassContext context(ir::clone_graph(graph), options);
  passes::PassManager().run(context);
  return context.fusion->kernels;
}

/// The fused kernels computing `outputs`, recorded through the public API and not evaluated.
inline std::vector<plan::Kernel> kernels_of(const std::vector<Tensor>& outputs) {
  std::vector<ir::NodePtr> nodes;
  for (const Tensor& output : outputs) nodes.push_back(output.node());
  return kernels_of_graph(ir::Graph::collect(nodes));
}

/// Random values of `dtype`, generated from `seed`: booleans, integers in [-50, 50) or normal.
inline Tensor sample(Shape shape, DType dtype, uint64_t seed) {
  if (dtype == bool_) return random_uniform(shape, seed) > 0.5;
  if (is_integer(dtype)) return random_uniform(shape, seed, -50, 50, dtype);
  return random_normal(shape, seed, 0, 1, dtype);
}

/// Values computed elsewhere (data leaves), with many ties: kernels read them from buffers
/// instead of generating them.
inline Tensor data(Shape shape, DType dtype) {
  const int64_t size = shape_size(shape);
  std::vector<double> values(size);
  for (int64_t i = 0; i < size; ++i) values[i] = static_cast<double>((i * 7) % 11) - 5.0;
  Tensor result = from_vector(values, shape).astype(dtype);
  result.wait_to_read();
  return result;
}

}  // namespace lz::codegen::test
