#include "options.h"

#include <algorithm>
#include <charconv>

namespace lazuli_bench {
namespace {

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    if (comma > start) parts.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return parts;
}

int parse_count(const std::string& flag, const std::string& text, int minimum) {
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < minimum) {
    throw UsageError(flag + " needs an integer >= " + std::to_string(minimum) + ", got '" + text +
                     "'");
  }
  return value;
}

}  // namespace

Size parse_size(const std::string& text) {
  int64_t multiplier = 1;
  std::string digits = text;
  if (!digits.empty() && (digits.back() == 'K' || digits.back() == 'k')) multiplier = 1 << 10;
  if (!digits.empty() && (digits.back() == 'M' || digits.back() == 'm')) multiplier = 1 << 20;
  if (multiplier != 1) digits.pop_back();
  int64_t value = 0;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || error != std::errc() || end != digits.data() + digits.size() ||
      value <= 0) {
    throw UsageError("--sizes: '" + text + "' is not a size (write 1000, 64K or 16M)");
  }
  return Size{text, value * multiplier};
}

std::string usage() {
  return R"(lazuli-bench: lazuli against a hand-written OpenMP loop, Eigen, numpy and other peers.

usage: lazuli-bench [options]
  --suite NAME[,NAME]   suites to run (default: all; --list names them)
  --list                list suites and their workloads, then exit
  --sizes S[,S]         problem sizes in elements: 1000, 64K, 16M (default: the suite's)
  --workloads W[,W]     only these workloads (default: all of the suite)
  --repeat N            timed runs per measurement, median reported (default: 5)
  --warmup N            untimed runs before them (default: 1)
  --json FILE           also write the rows as JSON
  --plot FILE.svg       also draw the rows: a bar per variant and workload, log time scale
  --no-numpy            skip the numpy column
  --peers               add JAX (jit), PyTorch (eager), torch.compile and Dr.Jit columns to the
                        fusion suite, where --python can import them (README.md here)
  --python EXE          the Python of the numpy and peer columns (default: python3)
  --no-compile-time     skip the compile-time report
  --memory-child O:N    run N steps of optimizer O (adam, sgd) as the memory suite's lazuli
                        process, printing their figures (the suite starts it)
  --help                this text

Threads: LZ_NUM_THREADS if set, else the hardware concurrency, for lazuli and the references.
Exit status: 0 when every checked result matches the hand-written loop, 1 on a MISMATCH, 2 on
a usage error.
)";
}

Options parse_options(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw UsageError(arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--suite") {
      options.suites = split_commas(value());
      if (options.suites.empty()) throw UsageError("--suite needs a name");
    } else if (arg == "--sizes") {
      options.sizes.clear();
      for (const std::string& size : split_commas(value())) {
        options.sizes.push_back(parse_size(size));
      }
      if (options.sizes.empty()) throw UsageError("--sizes needs at least one size");
    } else if (arg == "--workloads") {
      options.workloads = split_commas(value());
    } else if (arg == "--repeat") {
      options.repeat = parse_count(arg, value(), 1);
    } else if (arg == "--warmup") {
      options.warmup = parse_count(arg, value(), 0);
    } else if (arg == "--json") {
      options.json_path = value();
    } else if (arg == "--plot") {
      options.plot_path = value();
    } else if (arg == "--list") {
      options.list = true;
    } else if (arg == "--no-numpy") {
      options.numpy = false;
    } else if (arg == "--peers") {
      options.peers = true;
    } else if (arg == "--python") {
      options.python = value();
    } else if (arg == "--no-compile-time") {
      options.compile_time = false;
    } else if (arg == "--memory-child") {
      options.memory_child = value();
    } else if (arg == "--help" || arg == "-h") {
      options.help = true;
    } else {
      throw UsageError("unknown option '" + arg + "' (see --help)");
    }
  }
  return options;
}

}  // namespace lazuli_bench
