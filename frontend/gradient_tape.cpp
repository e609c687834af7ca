#include "frontend/gradient_tape.h"

#include <cassert>

#include "ir/clone.h"

namespace lz::frontend {

GradientTape::GradientTape() : outer_(innermost_tape) { innermost_tape = this; }

GradientTape::~GradientTape() { stop(); }

void GradientTape::stop() {
  if (!recording_) return;
  assert(innermost_tape == this && "gradient tapes stop in the reverse order they started");
  innermost_tape = outer_;
  recording_ = false;
}

const ir::Node* GradientTape::structure_of(const ir::Node* node) const {
  const ir::NodePositions::Entry* found = positions_.find(node);
  return found == positions_.end() ? nullptr : entries_[found->second].structure.get();
}

const ir::Node* GradientTape::recorded_structure(const ir::Node* node) {
  for (const GradientTape* tape = innermost_tape; tape != nullptr; tape = tape->outer_) {
    if (const ir::Node* structure = tape->structure_of(node)) return structure;
  }
  return nullptr;
}

void GradientTape::record(const ir::NodePtr& node) {
  ir::NodePtr structure = ir::copy_without_inputs(*node);
  structure->inputs = node->inputs;
  for (GradientTape* tape = innermost_tape; tape != nullptr; tape = tape->outer_) {
    if (tape->positions_.add(node.get())) tape->entries_.push_back({node, structure});
  }
}

}  // namespace lz::frontend
