// lz::vjp, grad and value_and_grad: the backward pass recorded from the forward pass's nodes.
#include "lazuli/autodiff.h"

#include <string>
#include <utility>

#include "frontend/evaluation.h"
#include "frontend/gradient_tape.h"
#include "frontend/recording.h"
#include "frontend/vjp_rules.h"
#include "ir/clone.h"
#include "ir/node_positions.h"
#include "lazuli/error.h"

namespace lz {
namespace {

/// A node of the forward pass between the outputs and the inputs.
struct ForwardNode {
  ir::NodePtr node;           // its value
  const ir::Node* structure;  // its op, attributes and inputs as recorded; null for a leaf
  bool carries_gradient;      // floating, and an input or computed from one
};

/// Throws unless vjp can see how output `index` was computed: a value already computed, with
/// no tape holding its structure, would silently get a zero gradient.
void check_still_recorded(size_t index, const ir::Node& output, const ir::NodePositions& inputs) {
  if (!output.was_computed || inputs.contains(&output) ||
      frontend::GradientTape::recorded_structure(&output) != nullptr) {
    return;
  }
  throw Error("[grad] output " + std::to_string(index) + " (recorded at " +
              output.location.file_name() + ":" + std::to_string(output.location.line()) +
              ") was already computed, which drops how it was computed, so its gradient cannot "
              "be taken; call vjp before reading it, or use lz::grad or lz::value_and_grad, "
              "which record the function on a tape");
}

/// The nodes the outputs are computed from, each after its inputs (so the backward pass runs
/// over them in reverse), stopping at the inputs and at computed values of no known structure.
class ForwardPass {
 public:
  ForwardPass(const std::vector<ir::NodePtr>& outputs, const std::vector<ir::NodePtr>& inputs,
              const frontend::GradientTape* finished_tape);

  const std::vector<ForwardNode>& order() const { return order_; }
  /// The position in order() of a node the walk reached.
  size_t position_of(const ir::Node* node) const { return static_cast<size_t>(position_.at(node)); }
  bool carries_gradient(const ir::Node* node) const {
    const ir::NodePositions::Entry* found = position_.find(node);
    return found != position_.end() && order_[found->second].carries_gradient;
  }

 private:
  const ir::Node* structure_of(const ir::NodePtr& node);

  const frontend::GradientTape* finished_tape_;
  ir::NodePositions inputs_;
  std::vector<ForwardNode> order_;
  ir::NodePositions position_;
  std::vector<ir::NodePtr> copies_;  // structures of pending nodes no tape has
};

ForwardPass::ForwardPass(const std::vector<ir::NodePtr>& outputs,
                         const std::vector<ir::NodePtr>& inputs,
                         const frontend::GradientTape* finished_tape)
    : finished_tape_(finished_tape) {
  for (const ir::NodePtr& input : inputs) inputs_.add(input.get());
  // A pending node's op and inputs are read under the graph's lock: an evaluation on another
  // thread may turn it into data meanwhile.
  const auto lock = frontend::lock_graph();
  if (finished_tape_ == nullptr) {
    for (size_t i = 0; i < outputs.size(); ++i) check_still_recorded(i, *outputs[i], inputs_);
  }
  struct Frame {
    ir::NodePtr node;
    const ir::Node* structure;
    size_t next_input;
  };
  ir::NodePositions entered;
  std::vector<Frame> stack;
  for (const ir::NodePtr& output : outputs) {
    if (!entered.add(output.get())) continue;
    stack.push_back({output, structure_of(output), 0});
    while (!stack.empty()) {
      Frame& frame = stack.back();
      if (frame.structure != nullptr && frame.next_input < frame.structure->inputs.size()) {
        const ir::NodePtr& input = frame.structure->inputs[frame.next_input++];
        if (entered.add(input.get())) {
          const ir::Node* structure = structure_of(input);
          stack.push_back({input, structure, 0});
        }
        continue;
      }
      bool carries = inputs_.contains(frame.node.get());
      if (frame.structure != nullptr) {
        for (const ir::NodePtr& input : frame.structure->inputs) {
          carries = carries || carries_gradient(input.get());
        }
      }
      carries = carries && is_floating(frame.node->dtype);
      position_.add(frame.node.get());
      order_.push_back({std::move(frame.node), frame.structure, carries});
      stack.pop_back();
    }
  }
}

const ir::Node* ForwardPass::structure_of(const ir::NodePtr& node) {
  if (inputs_.contains(node.get()) || node->stops_gradient) return nullptr;
  // grad's f: what f recorded (an inner gradient's backward pass included) is on its tape, and
  // every value from before f is a constant, as in JAX, whether or not it has been computed.
  if (finished_tape_ != nullptr) return finished_tape_->structure_of(node.get());
  if (const ir::Node* structure = frontend::GradientTape::recorded_structure(node.get())) {
    return structure;
  }
  if (node->op == ir::Op::Data || node->inputs.empty()) return nullptr;
  ir::NodePtr copy = ir::copy_without_inputs(*node);
  copy->inputs = node->inputs;
  copies_.push_back(std::move(copy));
  return copies_.back().get();
}

/// "[less] recorded at model.cpp:12", or "a data tensor" for a leaf that holds values.
std::string origin_of(const ir::Node& node, const ir::Node* structure) {
  const ir::Node& recorded = structure != nullptr ? *structure : node;
  if (recorded.op == ir::Op::Data) return "a data tensor";
  return "[" + std::string(ir::op_name(recorded.op)) + "] recorded at " +
         recorded.location.file_name() + ":" + std::to_string(recorded.location.line());
}

void check_floating(const char* what, size_t index, const ir::NodePtr& node,
                    const frontend::GradientTape* tape) {
  if (is_floating(node->dtype)) return;
  const ir::Node* structure = tape != nullptr ? tape->structure_of(node.get()) : nullptr;
  if (structure == nullptr) structure = frontend::GradientTape::recorded_structure(node.get());
  throw Error("[grad] " + std::string(what) + " " + std::to_string(index) + " is " +
                  std::string(dtype_name(node->dtype)) + ", from " + origin_of(*node, structure) +
                  "; only float32 and float64 tensors have gradients (convert with astype first)",
              Error::Kind::Type);
}

/// vjp over the forward pass, whose nodes `tape` (if any) recorded.
std::vector<Tensor> backward(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                             const std::vector<Tensor>& cotangents,
                             const frontend::GradientTape* tape, std::source_location loc) {
  if (cotangents.size() != outputs.size()) {
    throw Error("[grad] got " + std::to_string(outputs.size()) + " outputs and " +
                std::to_string(cotangents.size()) + " cotangents; give one cotangent per output");
  }
  std::vector<ir::NodePtr> output_nodes;
  std::vector<ir::NodePtr> input_nodes;
  for (size_t i = 0; i < outputs.size(); ++i) {
    output_nodes.push_back(frontend::node_of(outputs[i], "grad"));
    check_floating("output", i, output_nodes.back(), tape);
    const Shape& expected = output_nodes.back()->shape;
    const Shape& given = frontend::node_of(cotangents[i], "grad")->shape;
    if (given != expected) {
      throw Error("[grad] cotangent " + std::to_string(i) + " has shape " + shape_string(given) +
                  " but its output has shape " + shape_string(expected) +
                  "; a cotangent has its output's shape");
    }
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    input_nodes.push_back(frontend::node_of(inputs[i], "grad"));
    check_floating("input", i, input_nodes.back(), tape);
  }

  const ForwardPass forward(output_nodes, input_nodes, tape);
  // Each reached node's cotangent so far, by its position in the forward pass.
  std::vector<Tensor> cotangent_of(forward.order().size());
  auto accumulate = [&](const ir::Node* node, const Tensor& contribution) {
    Tensor& sum = cotangent_of[forward.position_of(node)];
    sum = sum.defined() ? Traced(sum, loc) + contribution : contribution;
  };
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!forward.carries_gradient(output_nodes[i].get())) continue;
    accumulate(output_nodes[i].get(), frontend::cast(cotangents[i], output_nodes[i]->dtype, loc));
  }
  for (size_t position = forward.order().size(); position-- > 0;) {
    const ForwardNode* step = &forward.order()[position];
    if (step->structure == nullptr || !step->carries_gradient) continue;
    if (!cotangent_of[position].defined()) continue;
    const Tensor cotangent = std::move(cotangent_of[position]);
    cotangent_of[position] = Tensor();
    std::vector<bool> wanted;
    for (const ir::NodePtr& input : step->structure->inputs) {
      wanted.push_back(forward.carries_gradient(input.get()));
    }
    const std::vector<Tensor> contributions =
        frontend::input_cotangents(*step->structure, Tensor(step->node), cotangent, wanted);
    for (size_t i = 0; i < contributions.size(); ++i) {
      if (wanted[i]) accumulate(step->structure->inputs[i].get(), contributions[i]);
    }
  }

  std::vector<Tensor> grads;
  for (const ir::NodePtr& input : input_nodes) {
    if (forward.carries_gradient(input.get())) {
      const Tensor& cotangent = cotangent_of[forward.position_of(input.get())];
      if (cotangent.defined()) {
        grads.push_back(cotangent);
        continue;
      }
    }
    const DeviceScope on_input_device(input->device);
    grads.push_back(zeros(input->shape, input->dtype, loc));
  }
  return grads;
}

}  // namespace

Tensor stop_gradient(const Tensor& x, std::source_location loc) try {
  const ir::NodePtr& input = frontend::node_of(x, "stop_gradient");
  ir::NodePtr node = frontend::make_node(ir::Op::Reshape, {input}, loc);
  node->shape = input->shape;
  node->stops_gradient = true;
  return frontend::record(std::move(node));
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

std::vector<Tensor> vjp(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                        const std::vector<Tensor>& cotangents, std::source_location loc) try {
  return backward(outputs, inputs, cotangents, nullptr, loc);
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

std::vector<Tensor> grad(const ScalarFunction& f, const std::vector<Tensor>& params,
                         std::source_location loc) {
  return value_and_grad(f, params, loc).grads;
}

ValueAndGrad value_and_grad(const ScalarFunction& f, const std::vector<Tensor>& params,
                            std::source_location loc) try {
  for (size_t i = 0; i < params.size(); ++i) {
    check_floating("input", i, frontend::node_of(params[i], "grad"), nullptr);
  }
  frontend::GradientTape tape;
  Tensor value = f(params);
  tape.stop();
  const ir::NodePtr& node = frontend::node_of(value, "grad");
  if (!node->shape.empty()) {
    throw Error("[grad] the function returned shape " + shape_string(node->shape) + " from " +
                origin_of(*node, tape.structure_of(node.get())) +
                "; grad and value_and_grad need a 0-d result (a loss: reduce it with sum or "
                "mean), or use lz::vjp with a cotangent");
  }
  const Tensor one = full({}, 1.0, node->dtype, loc);
  std::vector<Tensor> grads = backward({value}, params, {one}, &tape, loc);
  return {std::move(value), std::move(grads)};
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

}  // namespace lz
