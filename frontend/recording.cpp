#include "frontend/recording.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "frontend/evaluation.h"
#include "frontend/gradient_tape.h"
#include "ir/pending_list.h"
#include "ir/type_inference.h"
#include "lazuli/error.h"
#include "memory/buffer.h"
#include "support/hot_path.h"
#include "support/trace.h"

namespace lz::frontend {

namespace {

/// The device an op runs on: its inputs' (scalar constants aside), the same for all of them.
/// Reads only what a node keeps from its recording on (device, scalar_constant).
Device device_of_inputs(const ir::Node& node) {
  const ir::Node* first = nullptr;
  for (const ir::NodePtr& input : node.inputs) {
    if (input->scalar_constant) continue;
    if (first == nullptr) {
      first = input.get();
    } else if (input->device != first->device) {
      throw Error("[" + std::string(ir::op_name(node.op)) + "] got inputs on " +
                  first->device.name() + " and " + input->device.name() +
                  "; an op runs on one device: move one input with .to(lz::Device::" +
                  (first->device.kind() == Device::Kind::Cpu ? "cpu(" : "cuda(") +
                  std::to_string(first->device.index()) + "))");
    }
  }
  return first != nullptr ? first->device : default_device();
}

}  // namespace

LZ_HOT_PATH ir::NodePtr make_node(ir::Op op, ir::NodeInputs inputs, std::source_location loc) {
  ir::NodePtr node = ir::new_node();
  node->op = op;
  // An op with inputs runs on theirs, which record() gives it.
  if (inputs.empty()) node->device = default_device();
  node->inputs = std::move(inputs);
  node->location = loc;
  return node;
}

void rethrow_at_user_line(const Error& error, std::source_location loc) {
  if (error.location()) throw;
  const std::string_view message = error.what();
  const std::string where =
      "at " + std::string(loc.file_name()) + ":" + std::to_string(loc.line()) + ": ";
  const size_t op_end = message.starts_with('[') ? message.find("] ") : std::string_view::npos;
  if (op_end == std::string_view::npos)
    throw Error(where + std::string(message), loc, error.kind());
  throw Error(
      std::string(message.substr(0, op_end + 2)) + where + std::string(message.substr(op_end + 2)),
      loc, error.kind());
}

void check_shape(std::string_view op, const Shape& shape) {
  for (int64_t dim : shape) {
    if (dim < 0) {
      throw Error("[" + std::string(op) + "] shape " + shape_string(shape) +
                  " has a negative dimension; dimensions must be >= 0");
    }
  }
  ir::check_element_count(op, shape);
}

Tensor record_data(std::shared_ptr<memory::Buffer> buffer, Shape shape, Device device,
                   std::source_location loc) {
  ir::NodePtr node = make_node(ir::Op::Data, {}, loc);
  node->device = device;
  node->dtype = buffer->dtype();
  node->shape = std::move(shape);
  node->buffer = std::move(buffer);
  return record(std::move(node));
}

LZ_HOT_PATH Tensor record(ir::NodePtr node) try {
  support::trace::Span span("record", ir::op_name(node->op));
  const bool pending = !node->is_evaluated();
  // No graph lock: another thread may turn an input into data meanwhile, but that keeps the
  // input's dtype, shape and device, the only fields of inputs read here. The pending list's
  // lock is the one lock a recorded op takes.
  ir::TensorType type = ir::infer_type(*node);
  node->dtype = type.dtype;
  node->shape = std::move(type.shape);
  if (!node->inputs.empty()) node->device = device_of_inputs(*node);
  if (pending) {
    if (innermost_tape != nullptr) GradientTape::record(node);
    ir::PendingList::global().add(node.get());
    after_recording(node);
  }
  return Tensor(std::move(node));
} catch (const Error& error) {
  rethrow_at_user_line(error, node->location);
}

const ir::NodePtr& node_of(const Tensor& tensor, std::string_view op) {
  if (!tensor.defined()) {
    throw Error("[" + std::string(op) +
                "] got an empty tensor handle (a default-constructed lz::Tensor); assign it the "
                "result of an op first");
  }
  return tensor.node();
}

const ir::NodePtr& node_of(const Tensor& tensor, std::string_view op,
                           std::source_location loc) try {
  return node_of(tensor, op);
} catch (const Error& error) {
  rethrow_at_user_line(error, loc);
}

Tensor cast(const Tensor& tensor, DType dtype, std::source_location loc) try {
  const ir::NodePtr& input = node_of(tensor, "astype");
  if (input->dtype == dtype) return tensor;
  return Tensor(cast_node(input, dtype, loc));
} catch (const Error& error) {
  rethrow_at_user_line(error, loc);
}

ir::NodePtr cast_node(const ir::NodePtr& node, DType dtype, std::source_location loc) {
  if (node->dtype == dtype) return node;
  ir::NodePtr converted = make_node(ir::Op::Astype, {node}, loc);
  converted->dtype = dtype;
  return record(std::move(converted)).node();
}

namespace {

[[noreturn]] void fail_does_not_fit(std::string_view op, const std::string& shown, DType dtype) {
  throw Error("[" + std::string(op) + "] scalar " + shown + " does not fit " + dtype_name(dtype) +
              ", whose values are " + std::to_string(ir::integer_range(dtype).lowest) + ".." +
              std::to_string(ir::integer_range(dtype).highest));
}

}  // namespace

ir::ScalarParam scalar_param(std::string_view op, double value, DType dtype) {
  if (is_floating(dtype)) return ir::ScalarParam::of(value);
  const double truncated = std::trunc(value);
  // 2^63 is the first double above INT64_MAX; comparing against it avoids an undefined cast.
  const bool fits = std::isfinite(truncated) && truncated >= -0x1p63 && truncated < 0x1p63 &&
                    truncated >= static_cast<double>(ir::integer_range(dtype).lowest) &&
                    truncated <= static_cast<double>(ir::integer_range(dtype).highest);
  if (!fits) {
    char shown[32];
    std::snprintf(shown, sizeof(shown), "%.17g", value);
    fail_does_not_fit(op, shown, dtype);
  }
  return ir::ScalarParam::of_integer(static_cast<int64_t>(truncated));
}

ir::ScalarParam scalar_operand_param(std::string_view op, const ScalarOperand& value, DType dtype) {
  if (!value.exact && !is_floating(dtype)) {  // unsigned above INT64_MAX, kept modulo 2^64
    const std::string shown = std::to_string(static_cast<uint64_t>(value.integer));
    throw Error("[" + std::string(op) + "] scalar " + shown +
                " does not fit int64, the widest integer dtype; pass it as a floating value");
  }
  if (is_floating(dtype)) return ir::ScalarParam::of(value.floating);
  if (value.category == ScalarOperand::Category::Floating) {
    return scalar_param(op, value.floating, dtype);
  }
  const auto [lowest, highest] = ir::integer_range(dtype);
  const bool fits = value.integer >= lowest && value.integer <= highest;
  if (!fits) fail_does_not_fit(op, std::to_string(value.integer), dtype);
  return ir::ScalarParam::of_integer(value.integer);
}

namespace {

/// The number operands this thread made last, reused by the ops that read the same number:
/// a loop of `x = x + 1` makes one node for its 1 instead of one per op, which halves what an
/// evaluation walks, copies and frees. The passes merge equal constants anyway (common
/// subexpressions), so the optimized graph is the same. A reused node is immutable: it is never
/// a result to keep (frontend/launch.cpp), so no evaluation turns it into data.
///
/// The least recently used number goes first, whatever its value: which numbers share a node
/// then depends only on the order in which they repeat, so a training step whose learning rate
/// or bias corrections change at every step still records the same graph (the plan cache's key).
/// With a slot chosen by hashing the value, each step's new numbers evicted whichever numbers
/// shared their slots, and the README's Adam loop missed the plan cache at every step.
class RecentScalars {
 public:
  /// The node for `value` of `dtype` on `device`: one made before, or a new one.
  static ir::NodePtr get(DType dtype, Device device, ir::ScalarParam value) {
    if (destroyed_) return make(dtype, device, value);  // this thread is exiting
    RecentScalars& recent = instance();
    const uint64_t bits = std::bit_cast<uint64_t>(value.floating);
    // The last one used first: a loop's `x + 1` asks for the same number op after op.
    if (recent.holds(recent.last_used_, bits, value.integer, dtype, device)) {
      return recent.entries_[recent.last_used_].node;
    }
    size_t oldest = 0;
    for (size_t i = 0; i < kEntries; ++i) {
      if (recent.holds(i, bits, value.integer, dtype, device)) {
        recent.use(i);
        return recent.entries_[i].node;
      }
      if (recent.entries_[i].last_use < recent.entries_[oldest].last_use) oldest = i;
    }
    recent.bits_[oldest] = bits;
    recent.entries_[oldest] = {value.integer, dtype, device, make(dtype, device, value), 0};
    recent.use(oldest);
    return recent.entries_[oldest].node;
  }

 private:
  static constexpr size_t kEntries = 16;
  struct Entry {
    int64_t integer = 0;
    DType dtype = float32;
    Device device = Device::cpu();
    ir::NodePtr node;
    uint64_t last_use = 0;
  };

  bool holds(size_t i, uint64_t bits, int64_t integer, DType dtype, Device device) const {
    const Entry& entry = entries_[i];
    return bits_[i] == bits && entry.integer == integer && entry.node != nullptr &&
           entry.dtype == dtype && entry.device == device;
  }

  void use(size_t i) {
    entries_[i].last_use = ++uses_;
    last_used_ = i;
  }

  ~RecentScalars() { destroyed_ = true; }

  static RecentScalars& instance() {
    thread_local RecentScalars scalars;
    return scalars;
  }

  /// Shared by the ops of many lines, it carries none of them: the IR prints it without one.
  static ir::NodePtr make(DType dtype, Device device, ir::ScalarParam value) {
    ir::NodePtr node = make_node(ir::Op::Full, {}, std::source_location());
    node->dtype = dtype;
    node->device = device;
    node->params[0] = value;
    node->scalar_constant = true;
    node->reused_constant = true;
    return node;
  }

  uint64_t bits_[kEntries] =
      {};  // of each entry's value.floating, apart so the scan reads few lines
  Entry entries_[kEntries];
  uint64_t uses_ = 0;
  size_t last_used_ = 0;
  // Trivially destructible, so it can still be read after `scalars` is destroyed.
  static thread_local bool destroyed_;
};
thread_local bool RecentScalars::destroyed_ = false;

}  // namespace

LZ_HOT_PATH ir::NodePtr scalar_node(std::string_view op, const ScalarOperand& value, DType dtype) {
  // Not record(): a 0-d full has its type already, and as an operand, computed with the op that
  // reads it, it joins neither the pending list (whose lock is the one a recorded op takes) nor
  // the node budget's count.
  return RecentScalars::get(dtype, default_device(), scalar_operand_param(op, value, dtype));
}

Tensor scalar(std::string_view op, const ScalarOperand& value, DType dtype) {
  return Tensor(scalar_node(op, value, dtype));
}

namespace {

int promotion_rank(DType dtype) {
  switch (dtype) {
    case DType::Bool: return 0;
    case DType::Int32: return 1;
    case DType::Int64: return 2;
    case DType::Float32: return 3;
    case DType::Float64: return 4;
  }
  return 0;
}

int category_rank(DType dtype) { return dtype == bool_ ? 0 : is_integer(dtype) ? 1 : 2; }

}  // namespace

DType promote(DType a, DType b) { return promotion_rank(a) >= promotion_rank(b) ? a : b; }

DType promote_with_scalar(DType tensor, ScalarOperand::Category number) {
  const int number_rank = static_cast<int>(number);
  if (number_rank <= category_rank(tensor)) return tensor;
  return number == ScalarOperand::Category::Integer ? int64 : float32;
}

}  // namespace lz::frontend
