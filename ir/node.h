// One recorded op: the unit of the IR graph.
#pragma once

#include <cstdint>
#include <memory>
#include <source_location>
#include <string>
#include <vector>

#include "ir/node_inputs.h"
#include "ir/op.h"
#include "lazuli/device.h"
#include "lazuli/dtype.h"
#include "lazuli/error.h"

namespace lz::memory {
class Buffer;
}

namespace lz::ir {

/// A scalar parameter of a node (a fill value, a range start, a distribution bound). Integer
/// dtypes use `integer` so int64 values are exact; floating dtypes use `floating`. Parameters are
/// values, not structure: the structural hash ignores them so a new value never recompiles.
struct ScalarParam {
  double floating = 0;
  int64_t integer = 0;

  static ScalarParam of(double value) { return {value, 0}; }
  static ScalarParam of_integer(int64_t value) { return {static_cast<double>(value), value}; }
  friend bool operator==(const ScalarParam&, const ScalarParam&) = default;
};

/// What a collective was recorded for. All of them are the same on every rank of the group.
struct CollectiveAttributes {
  int64_t ranks = 0;      // the size of the group
  int64_t root = 0;       // Broadcast: the rank whose value every rank receives
  uint64_t sequence = 0;  // the collective's place in the order every rank runs them in
  friend bool operator==(const CollectiveAttributes&, const CollectiveAttributes&) = default;
};

/// The attributes only some ops carry, held apart from the node (Node::attributes) so that the
/// elementwise nodes recording makes by the million do not carry them.
struct NodeAttributes {
  // Sum/Max/Min/Argmax/Argmin: reduced axes (ascending, non-negative). Transpose: the permutation.
  // Concatenate, Gather: {axis}.
  std::vector<int64_t> axes;
  // Slice: per axis, the first index and the step (non-zero); the extent is the node's shape.
  std::vector<int64_t> starts;
  std::vector<int64_t> steps;
  CollectiveAttributes collective;
  friend bool operator==(const NodeAttributes&, const NodeAttributes&) = default;
};

/// A recorded op, its inputs, its inferred type and, once evaluated, its buffer.
///
/// Nodes are reference-counted: a user's Tensor and the consumers of a node keep it alive. When
/// a node is evaluated it becomes a `data` leaf and drops its inputs, so the graph behind it is
/// freed as soon as nothing else needs it. Destruction is iterative (see ~Node), so a chain of a
/// million recorded ops frees without deep recursion.
struct Node : std::enable_shared_from_this<Node> {
  Op op = Op::Data;
  DType dtype = float32;
  Device device = Device::cpu();  // where it runs: its inputs' device, or the default for leaves
  bool keepdims = false;          // reductions: reduced axes stay as size 1
  Shape shape;
  NodeInputs inputs;
  // Full: {value}. Arange: {start, step}. RandomUniform: {low, high}. RandomNormal: {mean, std}.
  // Held in the node, not in its attributes: every number in an expression records a full.
  ScalarParam params[2];
  uint64_t seed = 0;                       // random ops
  std::source_location location;           // the user's call that recorded this node
  std::shared_ptr<memory::Buffer> buffer;  // set once computed
  /// An evaluation already left this held result pending as cheap to recompute (or an
  /// optimizer recorded it as state that every step reads); the next one that computes it
  /// writes it out if still held, so chains of recomputation cannot grow.
  bool left_pending = false;
  /// A 0-d full made from a number (an operand such as the 1 of x + 1, or lz::full({}, v)): it
  /// runs on whatever device reads it. Set when it is made and never changed, so recording may
  /// read it while another thread turns the node into data.
  bool scalar_constant = false;
  /// A scalar constant that recording gives every op reading the same number: shared by many
  /// consumers and by the recording thread, so never a result to keep, and never changed.
  bool reused_constant = false;
  /// Set by become_data: this data leaf was a recorded op's result, computed (not user data), so
  /// how it was computed is gone. vjp refuses to differentiate such an output.
  bool was_computed = false;
  /// Made by lz::stop_gradient: an identity reshape that the backward pass treats as a constant.
  /// Set when it is made and never changed, like scalar_constant.
  bool stops_gradient = false;

  // Membership in the pending list (ir/pending_list.h), changed only by that list.
  bool pending = false;
  Node* pending_prev = nullptr;
  Node* pending_next = nullptr;

  // Graph::collect's marks, changed only by collect, which runs one walk at a time: the number
  // of the last walk that reached this node, and the node's position in that walk's graph.
  uint64_t walk = 0;
  int64_t walk_position = 0;

  // User-provided, so that allocate_shared's value-initialization runs the member initializers
  // only: with `= default` it first zero-fills the whole node, the costliest step of new_node.
  Node() {}  // NOLINT(modernize-use-equals-default)
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  ~Node();

  /// The op's attributes beyond params and seed; empty for the ops that have none.
  const NodeAttributes& attributes() const {
    return attributes_ != nullptr ? *attributes_ : kNoAttributes;
  }
  bool has_attributes() const { return attributes_ != nullptr; }
  /// The attributes to fill in, made on first use.
  NodeAttributes& set_attributes();
  const std::vector<int64_t>& axes() const { return attributes().axes; }
  const std::vector<int64_t>& starts() const { return attributes().starts; }
  const std::vector<int64_t>& steps() const { return attributes().steps; }
  const CollectiveAttributes& collective() const { return attributes().collective; }

  bool is_evaluated() const { return buffer != nullptr; }
  int64_t size() const { return shape_size(shape); }
  int ndim() const { return static_cast<int>(shape.size()); }

  /// Turns a computed node into a `data` leaf holding `result`, dropping inputs and attributes.
  void become_data(std::shared_ptr<memory::Buffer> result);
  /// Drops keepdims, params, seed and attributes, for a pass that turns this node into another op.
  void clear_attributes();

 private:
  static const NodeAttributes kNoAttributes;
  std::unique_ptr<NodeAttributes> attributes_;
};

/// A new, empty node. Recording makes and frees nodes by the million, so their memory comes
/// from a free list per thread instead of malloc.
NodePtr new_node();

/// The lz::Error about `node` failing while it ran: "[op] recorded at file:line: reason", whose
/// location() is the user's line that recorded the node.
Error recorded_error(const Node& node, const std::string& reason);

/// The dtype a node's params are held in: the node's own for full and arange; float64 for the
/// bounds of random ops, which are real numbers whatever dtype the result is rounded to.
inline DType param_dtype(const Node& node) {
  const bool random = node.op == Op::RandomUniform || node.op == Op::RandomNormal;
  return random ? float64 : node.dtype;
}

}  // namespace lz::ir
