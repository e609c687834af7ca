// What each way the executor (runtime/kernel_executor.h) runs a kernel shares to report it: the
// time it took, for its LZ_LOG line.
#pragma once

#include <chrono>

namespace lz::runtime {

/// Milliseconds from `start` to now.
inline double milliseconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace lz::runtime
