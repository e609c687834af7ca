#include "distributed/mpi_communicator.h"

#include <climits>
#include <cstring>
#include <utility>

#include "ir/printer.h"
#include "lazuli/error.h"

namespace lz::dist {
namespace {

MPI_Datatype mpi_type(DType dtype) {
  switch (dtype) {
    case DType::Float32: return MPI_FLOAT;
    case DType::Float64: return MPI_DOUBLE;
    case DType::Int32: return MPI_INT32_T;
    case DType::Int64: return MPI_INT64_T;
    case DType::Bool: return MPI_C_BOOL;
  }
  return MPI_BYTE;
}

/// all_max and all_min of bool are or and and: MPI defines max and min for numbers only.
MPI_Op mpi_reduction(ir::Op op, DType dtype) {
  switch (op) {
    case ir::Op::AllMax: return dtype == bool_ ? MPI_LOR : MPI_MAX;
    case ir::Op::AllMin: return dtype == bool_ ? MPI_LAND : MPI_MIN;
    default: return MPI_SUM;
  }
}

/// MPI counts elements in an int.
int mpi_count(const ir::Node& node, int64_t count) {
  if (count > INT_MAX) {
    throw ir::recorded_error(node, "moves " + std::to_string(count) +
                                       " elements per rank; MPI moves at most 2^31 - 1 in one "
                                       "collective: split the tensor");
  }
  return static_cast<int>(count);
}

/// Polls `request` until it completes (true) or the deadline passes (false, the request left
/// in flight, `owner` kept: MPI cannot cancel a collective). MPI makes progress inside MPI_Test.
bool wait(MPI_Request& request, runtime::Communicator::Deadline deadline,
          std::shared_ptr<const void> owner) {
  const bool done = runtime::poll_until(
      [&] {
        int complete = 0;
        MPI_Test(&request, &complete, MPI_STATUS_IGNORE);
        return complete != 0;
      },
      deadline);
  if (!done) runtime::keep_until_exit(std::move(owner));
  return done;
}

}  // namespace

MpiCommunicator::MpiCommunicator(MPI_Comm world) {
  MPI_Comm_dup(world, &collectives_);
  MPI_Comm_dup(world, &control_);
  MPI_Comm_rank(world, &rank_);
  MPI_Comm_size(world, &size_);
}

MpiCommunicator::~MpiCommunicator() {
  MPI_Comm_free(&collectives_);
  MPI_Comm_free(&control_);
}

bool MpiCommunicator::all_gather_bytes(std::span<const std::byte> mine, std::span<std::byte> all,
                                       Deadline deadline, std::shared_ptr<const void> owner) {
  MPI_Request request;
  MPI_Iallgather(mine.data(), static_cast<int>(mine.size()), MPI_BYTE, all.data(),
                 static_cast<int>(mine.size()), MPI_BYTE, collectives_, &request);
  return wait(request, deadline, std::move(owner));
}

bool MpiCommunicator::move(const ir::Node& node, const memory::Buffer& input,
                           memory::Buffer& output, Deadline deadline,
                           std::shared_ptr<const void> owner) {
  const MPI_Datatype type = mpi_type(node.dtype);
  // Per rank: the operand's elements, or for reduce_scatter each rank's part of the result.
  const int count =
      mpi_count(node, node.op == ir::Op::ReduceScatter ? output.size() : input.size());
  MPI_Request request;
  switch (node.op) {
    case ir::Op::AllSum:
    case ir::Op::AllMax:
    case ir::Op::AllMin:
      MPI_Iallreduce(input.data(), output.data(), count, type, mpi_reduction(node.op, node.dtype),
                     collectives_, &request);
      break;
    case ir::Op::AllGather:
      MPI_Iallgather(input.data(), count, type, output.data(), count, type, collectives_, &request);
      break;
    case ir::Op::ReduceScatter:
      MPI_Ireduce_scatter_block(input.data(), output.data(), count, type, MPI_SUM, collectives_,
                                &request);
      break;
    case ir::Op::Broadcast: {
      const int root = static_cast<int>(node.collective().root);
      if (rank_ == root && input.bytes() > 0) {
        std::memcpy(output.data(), input.data(), input.bytes());
      }
      MPI_Ibcast(output.data(), count, type, root, collectives_, &request);
      break;
    }
    default: throw ir::recorded_error(node, "is not a collective: the communicator cannot run it");
  }
  return wait(request, deadline, std::move(owner));
}

bool MpiCommunicator::barrier(Deadline deadline) {
  MPI_Request request;
  MPI_Ibarrier(control_, &request);
  return wait(request, deadline, nullptr);
}

}  // namespace lz::dist
