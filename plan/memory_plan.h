// Where each kernel output lives: buffer lifetimes over the schedule, reuse and in-place updates.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace lz::plan {

struct MemoryPlan {
  /// Planned buffers, by index: their size in bytes.
  std::vector<int64_t> buffer_bytes;
  /// Each kernel output that is an intermediate (not a graph output, not a data leaf) and the
  /// planned buffer it is written to. Two values share a buffer only if their lifetimes do not
  /// overlap.
  struct Assignment {
    ir::NodePtr value;
    int buffer = 0;
    bool in_place = false;  // written over an input that dies in the same kernel
  };
  std::vector<Assignment> assignments;
  /// Bytes the intermediates would take with one buffer each, and with the plan.
  int64_t unplanned_bytes = 0;
  int64_t planned_bytes = 0;
};

/// One line per assignment (`%5 -> buffer 1 (4096 bytes) in place`), then the totals.
std::string print_memory_plan(const MemoryPlan& plan, const ir::Graph& graph);

}  // namespace lz::plan
