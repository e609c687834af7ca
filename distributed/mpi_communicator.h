// The process group's communicator on MPI: collectives of host buffers through MPI's
// non-blocking collectives, polled so that a rank that never arrives costs a timeout, not a hang.
#pragma once

#include <mpi.h>

#include "runtime/collectives.h"

namespace lz::dist {

class MpiCommunicator final : public runtime::Communicator {
 public:
  /// Over the ranks of `world`, through two duplicates of it: one for the collectives, which
  /// the communication thread runs in order, one for barrier, which the user's thread calls, so
  /// that the two never interleave on one communicator.
  explicit MpiCommunicator(MPI_Comm world);
  ~MpiCommunicator() override;
  MpiCommunicator(const MpiCommunicator&) = delete;
  MpiCommunicator& operator=(const MpiCommunicator&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string name() const override { return "MPI"; }
  bool all_gather_bytes(std::span<const std::byte> mine, std::span<std::byte> all,
                        Deadline deadline, std::shared_ptr<const void> owner) override;
  bool move(const ir::Node& node, const memory::Buffer& input, memory::Buffer& output,
            Deadline deadline, std::shared_ptr<const void> owner) override;
  /// Returns once every rank has called barrier; false when the deadline passed first.
  bool barrier(Deadline deadline);

 private:
  MPI_Comm collectives_ = MPI_COMM_NULL;
  MPI_Comm control_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace lz::dist
