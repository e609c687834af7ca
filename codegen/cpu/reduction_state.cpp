// The split reduction's state combination: plain C++, shared by the runtime whatever the build.
#include <algorithm>
#include <bit>

#include "codegen/cpu/lowering.h"

namespace lz::codegen {

using ir::Op;

void combine_reduction_states(const std::vector<std::pair<ir::Op, DType>>& reductions,
                              uint64_t* into, const uint64_t* from) {
  for (size_t r = 0; r < reductions.size(); ++r) {
    const auto [op, dtype] = reductions[r];
    uint64_t& value = into[2 * r];
    const uint64_t other = from[2 * r];
    into[2 * r + 1] |= from[2 * r + 1];
    if (is_floating(dtype)) {
      const double a = std::bit_cast<double>(value);
      const double b = std::bit_cast<double>(other);
      const double combined = op == Op::Sum   ? a + b
                              : op == Op::Max ? std::max(a, b)
                                              : std::min(a, b);
      value = std::bit_cast<uint64_t>(combined);
    } else if (op == Op::Sum) {
      value += other;  // wraps, like the integer sum itself
    } else {
      const auto a = static_cast<int64_t>(value);
      const auto b = static_cast<int64_t>(other);
      value = static_cast<uint64_t>(op == Op::Max ? std::max(a, b) : std::min(a, b));
    }
  }
}

}  // namespace lz::codegen
