// Command-line options of lazuli-bench, parsed in one place.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace lazuli_bench {

/// A problem size as the user wrote it ("1M") and the element count it means (1048576).
struct Size {
  std::string label;
  int64_t elements = 0;
};

struct Options {
  std::vector<std::string> suites = {"all"};
  std::vector<Size> sizes;             // empty: each suite's default sizes
  std::vector<std::string> workloads;  // empty: every workload of the suite
  int repeat = 5;                      // timed runs per measurement; the median is reported
  int warmup = 1;                      // untimed runs before them
  std::string json_path;               // empty: no JSON
  std::string plot_path;               // empty: no SVG picture
  bool list = false;
  bool help = false;
  bool numpy = true;               // --no-numpy skips the numpy column
  bool peers = false;              // --peers adds JAX, PyTorch, torch.compile and Dr.Jit columns
  std::string python = "python3";  // --python: the interpreter of the numpy and peer columns
  bool compile_time = true;        // --no-compile-time skips the compile-time report
  std::string memory_child;        // --memory-child adam:8: the memory suite's lazuli process
};

/// A command line lazuli-bench cannot run; the message says what is wrong.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Parses argv; throws UsageError.
Options parse_options(int argc, char** argv);
/// "64K" -> 65536, "1M" -> 1048576, "1000" -> 1000 (K and M are powers of two); throws UsageError.
Size parse_size(const std::string& text);
/// The --help text.
std::string usage();

}  // namespace lazuli_bench
