// How much memory compiled kernels hold: evaluates a row sum over N distinct shapes, so each
// compiles a kernel of its own, and prints how far the resident set grew. The in-memory kernel
// cache keeps at most LZ_KERNEL_CACHE_SIZE kernels and unloads the code of those it evicts.
//
//   LZ_CACHE=0 build/release/benchmarks/kernel_cache_memory 3000
//   LZ_CACHE=0 LZ_KERNEL_CACHE_SIZE=100 build/release/benchmarks/kernel_cache_memory 3000
//   LZ_CACHE=0 LZ_KERNEL_CACHE_SIZE=100000 build/release/benchmarks/kernel_cache_memory 3000
// (the last as good as unbounded).
#include <lazuli/lazuli.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

namespace {

long resident_kilobytes() {
  std::ifstream status("/proc/self/status");
  std::string key;
  long kilobytes = 0;
  while (status >> key) {
    if (key == "VmRSS:") {
      status >> kilobytes;
      break;
    }
  }
  return kilobytes;
}

}  // namespace

int main(int argc, char** argv) {
  const int shapes = argc > 1 ? std::atoi(argv[1]) : 0;
  if (shapes <= 0) {
    std::fprintf(stderr, "usage: kernel_cache_memory SHAPES (a positive count)\n");
    return 2;
  }
  const long before = resident_kilobytes();
  for (int columns = 2; columns < 2 + shapes; ++columns) {
    const lz::Tensor x = lz::reshape(lz::arange(0, 2.0 * columns, 1, lz::float64), {2, columns});
    (void)lz::sum(x * 0.5, {1}).to_vector<double>();
  }
  std::printf("%d kernel shapes: resident set grew %ld MB\n", shapes,
              (resident_kilobytes() - before) / 1024);
}
