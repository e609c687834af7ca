// The sizes of a matmul node: what the interpreter, BLAS and cuBLAS each read of its shapes.
#pragma once

#include <cstdint>

#include "ir/node.h"
#include "lazuli/shape.h"

namespace lz::ir {

/// A matmul of [..., m, k] by [..., k, n] into [batch..., m, n] (type inference broadcast the
/// batch dimensions of both operands to `batch`).
struct MatmulShape {
  int64_t m = 0;
  int64_t k = 0;
  int64_t n = 0;
  Shape batch;

  static MatmulShape of(const Node& matmul) {
    const Shape& a = matmul.inputs[0]->shape;
    const Shape& b = matmul.inputs[1]->shape;
    return {a[a.size() - 2], a[a.size() - 1], b[b.size() - 1],
            Shape(matmul.shape.begin(), matmul.shape.end() - 2)};
  }
};

}  // namespace lz::ir
