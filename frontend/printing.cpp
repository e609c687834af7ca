// operator<<: numpy-like printing of a tensor (a blocking point).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>
#include <sstream>
#include <string>

#include "frontend/evaluation.h"
#include "frontend/recording.h"
#include "memory/buffer.h"

namespace lz {
namespace {

// As numpy: tensors of more elements than this show only kEdgeItems at each end of every axis.
constexpr int64_t kSummarizeAbove = 1000;
constexpr int64_t kEdgeItems = 3;

std::string format_element(const memory::Buffer& buffer, int64_t index) {
  char text[64];
  switch (buffer.dtype()) {
    case DType::Bool: return buffer.data_as<bool>()[index] ? "true" : "false";
    case DType::Int32: return std::to_string(buffer.data_as<int32_t>()[index]);
    case DType::Int64: return std::to_string(buffer.data_as<int64_t>()[index]);
    case DType::Float32:
    case DType::Float64: {
      const bool single = buffer.dtype() == DType::Float32;
      const double value =
          single ? buffer.data_as<float>()[index] : buffer.data_as<double>()[index];
      if (std::isnan(value))
        return "nan";  // printf may say "-nan"; the sign of a NaN means nothing
      std::snprintf(text, sizeof(text), "%.8g", value);  // numpy prints 8 digits
      break;
    }
  }
  std::string value(text);
  // A trailing '.' marks whole floats as floats ("2."), as numpy does.
  if (value.find_first_of(".eni") == std::string::npos) value += '.';
  return value;
}

/// Prints the tensor as nested lists, row-major, eliding the middle of long axes.
class NestedPrinter {
 public:
  NestedPrinter(const memory::Buffer& buffer, const Shape& shape, bool summarize)
      : buffer_(buffer), shape_(shape), summarize_(summarize) {
    strides_.assign(shape.size(), 1);
    for (int d = static_cast<int>(shape.size()) - 2; d >= 0; --d) {
      strides_[d] = strides_[d + 1] * shape[d + 1];
    }
    collect(0, 0);
    for (const std::string& text : elements_) width_ = std::max(width_, text.size());
  }

  void print(std::ostream& out, const std::string& indent) {
    next_ = 0;
    write(out, 0, indent);
  }

 private:
  bool elided(int64_t extent) const { return summarize_ && extent > 2 * kEdgeItems; }

  /// Calls visit(i) for each shown index of an axis of `extent`, and gap() where items are elided.
  template <class Visit, class Gap>
  void for_shown(int64_t extent, Visit visit, Gap gap) const {
    for (int64_t i = 0; i < extent; ++i) {
      if (elided(extent) && i == kEdgeItems) {
        gap();
        i = extent - kEdgeItems;
      }
      visit(i);
    }
  }

  void collect(size_t axis, int64_t offset) {
    if (axis == shape_.size()) {
      elements_.push_back(format_element(buffer_, offset));
      return;
    }
    for_shown(
        shape_[axis], [&](int64_t i) { collect(axis + 1, offset + i * strides_[axis]); }, [] {});
  }

  void write(std::ostream& out, size_t axis, const std::string& indent) {
    if (axis == shape_.size()) {
      const std::string& text = elements_[next_++];
      out << std::string(width_ - text.size(), ' ') << text;
      return;
    }
    out << '[';
    const bool innermost = axis + 1 == shape_.size();
    const std::string separator =
        innermost ? ", " : "," + std::string(shape_.size() - axis - 1, '\n') + indent + ' ';
    bool first = true;
    for_shown(
        shape_[axis],
        [&](int64_t) {
          if (!first) out << separator;
          first = false;
          write(out, axis + 1, indent + ' ');
        },
        [&] {
          out << separator << "...";
          first = false;
        });
    out << ']';
  }

  const memory::Buffer& buffer_;
  const Shape& shape_;
  bool summarize_;
  std::vector<int64_t> strides_;
  std::vector<std::string> elements_;
  size_t width_ = 0;
  size_t next_ = 0;
};

}  // namespace

std::ostream& operator<<(std::ostream& out, const Tensor& x) {
  const ir::NodePtr& node = frontend::node_of(x, "print");
  // An operator takes no defaulted source_location: the line that recorded x is the closest
  // one of the user's, for the log and for the errors of its evaluation.
  frontend::evaluate({node}, EvaluationReason::Print, node->location);
  const std::string prefix = "tensor(";
  NestedPrinter printer(node->buffer->host(), node->shape, node->size() > kSummarizeAbove);
  out << prefix;
  printer.print(out, std::string(prefix.size(), ' '));
  out << ", shape=" << shape_string(node->shape) << ", dtype=" << dtype_name(node->dtype) << ')';
  return out;
}

}  // namespace lz
