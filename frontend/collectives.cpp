// The collectives of lz::dist, recorded as ops of the IR; the process group's communicator
// (installed by lz::dist::init, in lazuli::dist) runs them (runtime/collectives.h).
#include "runtime/collectives.h"
#include "frontend/recording.h"
#include "lazuli/dist.h"
#include "lazuli/error.h"

namespace lz::dist {
namespace {

const char* reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return "Sum";
    case ReduceOp::Mean: return "Mean";
    case ReduceOp::Max: return "Max";
    case ReduceOp::Min: return "Min";
  }
  return "?";
}

std::shared_ptr<runtime::Communicator> group(std::string_view op) {
  std::shared_ptr<runtime::Communicator> communicator = runtime::installed_communicator();
  if (communicator == nullptr) {
    throw Error("[" + std::string(op) +
                "] there is no process group: call lz::dist::init() first (from lazuli::dist)");
  }
  return communicator;
}

/// Records collective `op` of `x` across the group; `root` for broadcast only.
Tensor record_collective(ir::Op op, const Tensor& x, int root, std::source_location loc) {
  const std::string_view name = ir::op_name(op);
  const ir::NodePtr& input = frontend::node_of(x, name);
  const std::shared_ptr<runtime::Communicator> communicator = group(name);
  if (input->device.kind() != Device::Kind::Cpu) {
    throw Error("[" + std::string(name) + "] collectives of " + input->device.name() +
                " tensors need NCCL, which lazuli does not load yet; move the tensor with "
                "to(lz::Device::cpu()) first");
  }
  ir::NodePtr node = frontend::make_node(op, {input}, loc);
  node->axes = {communicator->size()};
  if (op == ir::Op::Broadcast) node->axes.push_back(root);
  node->seed = runtime::next_collective_sequence();
  return frontend::record(std::move(node));
}

/// Records collective `op` of `x` (all_sum or reduce_scatter) divided by the number of ranks,
/// for ReduceOp::Mean; floating dtypes only, checked before anything is recorded.
Tensor record_mean(ir::Op op, const Tensor& x, std::string_view name, std::source_location loc) {
  const DType dtype = frontend::node_of(x, name)->dtype;
  if (!is_floating(dtype)) {
    throw Error("[" + std::string(name) + "] Mean needs a floating dtype, got " +
                    dtype_name(dtype) + "; take Sum and divide, or convert with astype",
                Error::Kind::Type);
  }
  const Tensor sum = record_collective(op, x, 0, loc);
  return Traced(sum, loc) / static_cast<double>(world_size(loc));
}

}  // namespace

bool is_initialized() { return runtime::installed_communicator() != nullptr; }

int rank(std::source_location loc) try {
  return group("rank")->rank();
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

int world_size(std::source_location loc) try {
  return group("world_size")->size();
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

Tensor all_reduce(const Tensor& x, ReduceOp op, std::source_location loc) try {
  switch (op) {
    case ReduceOp::Sum: return record_collective(ir::Op::AllSum, x, 0, loc);
    case ReduceOp::Mean: return record_mean(ir::Op::AllSum, x, "all_reduce", loc);
    case ReduceOp::Max: return record_collective(ir::Op::AllMax, x, 0, loc);
    case ReduceOp::Min: return record_collective(ir::Op::AllMin, x, 0, loc);
  }
  throw Error("[all_reduce] unknown reduce op");
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

Tensor all_gather(const Tensor& x, std::source_location loc) try {
  return record_collective(ir::Op::AllGather, x, 0, loc);
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

Tensor reduce_scatter(const Tensor& x, ReduceOp op, std::source_location loc) try {
  if (op != ReduceOp::Sum && op != ReduceOp::Mean) {
    throw Error(std::string("[reduce_scatter] takes ReduceOp::Sum or ReduceOp::Mean, got ") +
                reduce_op_name(op) + "; use all_reduce and slice for Max or Min");
  }
  if (op == ReduceOp::Mean) return record_mean(ir::Op::ReduceScatter, x, "reduce_scatter", loc);
  return record_collective(ir::Op::ReduceScatter, x, 0, loc);
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

Tensor broadcast(const Tensor& x, int root, std::source_location loc) try {
  return record_collective(ir::Op::Broadcast, x, root, loc);
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

}  // namespace lz::dist
