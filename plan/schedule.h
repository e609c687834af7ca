// The order kernels run in and the streams they run on, from their dependency DAG.
#pragma once

#include <string>
#include <vector>

namespace lz::plan {

struct FusionPlan;

struct Schedule {
  /// Kernel ids (FusionPlan::kernels positions) in launch order: a topological order.
  std::vector<int> order;
  /// By kernel id: the length of the longest dependency chain before it. Kernels of one level
  /// are independent of each other.
  std::vector<int> level;
  /// By kernel id: the stream it is launched on. Independent kernels get different streams.
  std::vector<int> stream;
  /// A kernel that must wait for a producer on another stream (the runtime records an event
  /// after the producer and waits on it before the kernel). Same-stream order needs no wait.
  struct Wait {
    int kernel = 0;
    int producer = 0;
  };
  std::vector<Wait> waits;
};

/// `kernel 3: level 1, stream 0, waits for kernel 1 (stream 1)` lines, in launch order.
std::string print_schedule(const Schedule& schedule);

}  // namespace lz::plan
