// Tensors in numpy's .npy files.
#pragma once

#include <source_location>
#include <string>

#include "lazuli/tensor.h"

namespace lz {

#define LZ_HERE std::source_location loc = std::source_location::current()

/// The tensor in the .npy file at `path` (format versions 1.0, 2.0 and 3.0; C or Fortran order;
/// either byte order) of float32, float64, int32, int64 or bool, or of a narrower type read
/// widened, as lz.asarray widens numpy's arrays (every value exact): float16 to float32, int8,
/// int16, uint8 and uint16 to int32, uint32 to int64. A file that is not such a .npy file is an
/// "[load_npy]" error naming the file and what is wrong.
Tensor load_npy(const std::string& path, Device device = default_device(), LZ_HERE);

/// Writes `x` to `path` as a .npy file (version 1.0, or 2.0 for a header too long for it), C
/// order, little-endian. A blocking point: waits for x. The file is written under a temporary
/// name and renamed, so a failure never leaves a partial file at `path`.
void save_npy(const std::string& path, const Tensor& x, LZ_HERE);

#undef LZ_HERE

}  // namespace lz
