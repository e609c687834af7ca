// The collectives of lz::dist, recorded as ops of the IR; the process group's communicator
// (installed by lz::dist::init, in lazuli::dist) runs them (runtime/collectives.h).
#include <atomic>
#include <optional>

#include "frontend/recording.h"
#include "ir/type_inference.h"
#include "lazuli/dist.h"
#include "lazuli/error.h"
#include "runtime/collectives.h"

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

/// The installed communicator; throws, naming the function `name`, when there is none.
std::shared_ptr<runtime::Communicator> communicator_for(std::string_view name) {
  std::shared_ptr<runtime::Communicator> communicator = runtime::installed_communicator();
  if (communicator == nullptr) {
    throw Error("[" + std::string(name) +
                "] there is no process group: call lz::dist::init() first (from lazuli::dist)");
  }
  return communicator;
}

/// NCCL gives a rank one GPU: the device of the rank's first collective of CUDA tensors, which
/// its later ones must use too.
void check_collective_device(std::string_view name, Device device) {
  static std::atomic<int> nccl_device{-1};
  if (device.kind() != Device::Kind::Cuda) return;
  int expected = -1;
  if (nccl_device.compare_exchange_strong(expected, device.index()) || expected == device.index()) {
    return;
  }
  throw Error("[" + std::string(name) + "] this rank's collectives of CUDA tensors run on " +
              Device::cuda(expected).name() +
              " (its first one's device), and NCCL drives one "
              "GPU per rank: move the tensor there with to(), or give each rank its GPU with "
              "lz::dist::device()");
}

/// Records collective `op` of `x` across the group, for the public function `name` (which
/// errors name); `reduce` for all_reduce and reduce_scatter, `root` for broadcast. ReduceOp::Mean
/// (all_sum and reduce_scatter only) divides the result by the number of ranks. Everything is
/// checked before the collective takes its sequence number: a rank that rejects an op must not skip
/// a number the others use.
Tensor record_collective(ir::Op op, std::string_view name, const Tensor& x,
                         std::optional<ReduceOp> reduce, int root, std::source_location loc) {
  const ir::NodePtr& input = frontend::node_of(x, name);
  const std::shared_ptr<runtime::Communicator> communicator = communicator_for(name);
  if (reduce == ReduceOp::Sum && input->dtype == bool_) {
    throw Error("[" + std::string(name) +
                    "] Sum is not defined for bool operands; take Max (or) or Min (and), or "
                    "convert with astype",
                Error::Kind::Type);
  }
  if (reduce == ReduceOp::Mean && !is_floating(input->dtype)) {
    throw Error("[" + std::string(name) + "] Mean needs a floating dtype, got " +
                    dtype_name(input->dtype) + "; take Sum and divide, or convert with astype",
                Error::Kind::Type);
  }
  ir::NodePtr node = frontend::make_node(op, {input}, loc);
  ir::CollectiveAttributes& collective = node->set_attributes().collective;
  collective.ranks = communicator->size();
  if (op == ir::Op::Broadcast) collective.root = root;
  ir::infer_type(*node);  // its errors before the sequence number is taken
  check_collective_device(name, input->device);
  collective.sequence = runtime::next_collective_sequence();
  const Tensor result = frontend::record(std::move(node));
  if (reduce != ReduceOp::Mean) return result;
  return Traced(result, loc) / static_cast<double>(communicator->size());
}

}  // namespace

bool is_initialized() { return runtime::installed_communicator() != nullptr; }

int rank(std::source_location loc) try {
  return communicator_for("rank")->rank();
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

int world_size(std::source_location loc) try {
  return communicator_for("world_size")->size();
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

Tensor all_reduce(const Tensor& x, ReduceOp op, std::source_location loc) try {
  const ir::Op collective = op == ReduceOp::Max   ? ir::Op::AllMax
                            : op == ReduceOp::Min ? ir::Op::AllMin
                                                  : ir::Op::AllSum;
  return record_collective(collective, "all_reduce", x, op, 0, loc);
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

Tensor all_gather(const Tensor& x, std::source_location loc) try {
  return record_collective(ir::Op::AllGather, "all_gather", x, std::nullopt, 0, loc);
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

Tensor reduce_scatter(const Tensor& x, ReduceOp op, std::source_location loc) try {
  if (op != ReduceOp::Sum && op != ReduceOp::Mean) {
    throw Error(std::string("[reduce_scatter] takes ReduceOp::Sum or ReduceOp::Mean, got ") +
                reduce_op_name(op) + "; use all_reduce and slice for Max or Min");
  }
  return record_collective(ir::Op::ReduceScatter, "reduce_scatter", x, op, 0, loc);
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

Tensor broadcast(const Tensor& x, int root, std::source_location loc) try {
  return record_collective(ir::Op::Broadcast, "broadcast", x, std::nullopt, root, loc);
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

}  // namespace lz::dist
