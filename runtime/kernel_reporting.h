// What each way the executor (runtime/kernel_executor.h) runs a kernel shares to report it: the
// time it took, for its LZ_LOG line, and files of its code, for LZ_DUMP.
#pragma once

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

namespace lz::runtime {

/// Milliseconds from `start` to now.
inline double milliseconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

/// Writes `text` to the file at `path` (a dump), replacing it.
inline void write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

}  // namespace lz::runtime
