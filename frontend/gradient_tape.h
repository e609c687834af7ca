// What a gradient is taken through, kept as it was recorded. An evaluation turns a computed node
// into a data leaf that drops its op and inputs (so a chain's memory goes as soon as it is
// computed); the code lz::grad differentiates may be evaluated before the backward pass is built
// (by the node budget, or a print inside it), so a tape copies each node's structure as it is
// recorded.
#pragma once

#include <vector>

#include "ir/node.h"
#include "ir/node_positions.h"

namespace lz::frontend {

class GradientTape;

/// The innermost tape recording on this thread, or null: record() reads it for every op, so it
/// is a plain thread_local pointer.
inline thread_local GradientTape* innermost_tape = nullptr;

/// Keeps, while it records, the op, attributes and inputs of every node recorded on this thread.
/// Tapes nest: each recording tape sees every node recorded while it records, so the tape of an
/// outer gradient also sees the backward pass of an inner one (differentiating twice).
class GradientTape {
 public:
  /// Starts recording on this thread.
  GradientTape();
  ~GradientTape();
  GradientTape(const GradientTape&) = delete;
  GradientTape& operator=(const GradientTape&) = delete;

  /// Stops recording (the backward pass built from this tape is not on it) and keeps what it has.
  /// Tapes stop in the reverse order they started.
  void stop();

  /// `node`'s op, attributes and inputs as recorded while this tape recorded, or null.
  const ir::Node* structure_of(const ir::Node* node) const;

  /// `node`'s structure on the innermost recording tape that has it, or null.
  static const ir::Node* recorded_structure(const ir::Node* node);

  /// Called by record() for each node, before the node joins the pending graph (so no
  /// evaluation can have changed it yet), with every recording tape.
  static void record(const ir::NodePtr& node);

 private:
  struct Entry {
    ir::NodePtr recorded;   // kept alive, so that its address is not reused for another node
    ir::NodePtr structure;  // a copy that no evaluation changes
  };
  std::vector<Entry> entries_;
  ir::NodePositions positions_;  // of each recorded node in entries_
  GradientTape* outer_ = nullptr;
  bool recording_ = true;
};

}  // namespace lz::frontend
