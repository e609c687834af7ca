// Combining hashes: the one mixer of every hash lazuli computes (common subexpressions, the plan
// cache's structure).
#pragma once

#include <cstdint>

namespace lz::support {

/// `seed` combined with `value`: boost::hash_combine's step widened to 64 bits.
inline uint64_t hash_mix(uint64_t seed, uint64_t value) {
  return seed ^ (value + 0x9e3779b97f4a7c15ULL + (seed << 12) + (seed >> 4));
}

}  // namespace lz::support
