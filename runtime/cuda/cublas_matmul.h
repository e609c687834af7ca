// Matmuls on a CUDA device through cuBLAS, loaded at run time (dlopen("libcublas.so.13")) like
// the driver. float32 and float64; TF32 stays off (cuBLAS's default math), so float32 products
// round like float32 arithmetic, within a K-term sum's rounding of the interpreter's. The
// fused epilogue (bias, activation) is the next generated kernel, as on the CPU.
#pragma once

#include <cstdint>
#include <string>

#include "ir/node.h"
#include "runtime/cuda/device.h"

namespace lz::runtime::cuda {

/// Whether cuBLAS can be loaded; `why` says what failed when it cannot.
bool cublas_available(std::string* why = nullptr);

/// An operand of a product on the device: the address of its contiguous row-major matrices, or,
/// when `transposed`, of their transposes (plan::matmul_operand).
struct CublasOperand {
  uint64_t address = 0;
  bool transposed = false;
};

/// Queues out = a @ b for `node` (a MatMul of float32 or float64, batch dimensions broadcast)
/// on stream `stream` of `device`. Throws lz::Error naming the op for another dtype, a dimension
/// beyond cuBLAS's int, or cuBLAS missing.
void cublas_matmul(CudaDevice& device, int stream, const ir::Node& node, CublasOperand a,
                   CublasOperand b, uint64_t out);

}  // namespace lz::runtime::cuda
