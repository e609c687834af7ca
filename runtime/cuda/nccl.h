// Collectives between the GPUs of the process group's ranks through NCCL, loaded at run time
// (dlopen("libnccl.so.2")) like the driver and cuBLAS: the build needs neither NCCL nor a GPU,
// and only a program that runs a collective of CUDA tensors loads it.
//
// The communication thread (runtime/collectives.h) drives it: the ranks agree on a collective
// through the host transport first, then each queues NCCL's data movement on its device's
// collective stream, after the writes of the operand, and waits for it there, so that a rank
// that stopped fails the collective within the process group's timeout instead of hanging.
#pragma once

#include <string>

#include "ir/node.h"
#include "memory/buffer.h"
#include "runtime/collectives.h"
#include "runtime/cuda/device.h"
#include "runtime/cuda/memory.h"

namespace lz::runtime::cuda {

struct NcclComm;  // behind nccl.h's ncclComm_t
struct NcclApi;   // the entry points resolved from libnccl.so.2 (nccl.cpp)

/// NCCL's ncclUniqueId: made by one rank, received by every rank, joined with.
struct NcclUniqueId {
  char internal[128] = {};
};

/// Whether NCCL loads; `why` says what failed when it does not.
bool nccl_available(std::string* why = nullptr);

/// A new unique id for the ranks to join with (rank 0 makes it). Throws lz::Error naming
/// `node`, the collective the ranks join for, when NCCL cannot load or make one.
NcclUniqueId make_nccl_unique_id(const ir::Node& node);

/// This rank's NCCL communicator over the process group's ranks, one GPU each. Its calls come
/// from the communication thread only (and its destructor from install_communicator, while that
/// thread is idle). Communicators are non-blocking, so that no NCCL call waits past a deadline.
class NcclCommunicator {
 public:
  /// Joins as rank `rank` of the `size` ranks joining with `id`, on `device`, once every rank has
  /// joined; null when `deadline` passed first (the attempt is aborted). Throws lz::Error naming
  /// `node` (the collective the ranks join for) with NCCL's reason when it cannot.
  static std::unique_ptr<NcclCommunicator> join(CudaDevice& device, const NcclUniqueId& id,
                                                int rank, int size, const ir::Node& node,
                                                Communicator::Deadline deadline);
  /// Frees the communicator (an aborted one is gone already).
  ~NcclCommunicator();
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  CudaDevice& device() const { return device_; }

  /// The data movement of collective `node` (whose type every rank has checked) from `input`
  /// into `output`, memory of this communicator's device allocated on kCollectiveStream: queued
  /// on that stream after the writes of `input`, and waited for. Returns false when `deadline`
  /// passed first. Throws lz::Error naming `node` for what NCCL or the device reports. After
  /// either, the communicator is aborted (it moves nothing again: its peers may be anywhere in
  /// this collective) and `owner`, which owns the memory, is kept until the process exits.
  bool move(const ir::Node& node, const memory::Buffer& input, CudaMemory& output,
            Communicator::Deadline deadline, std::shared_ptr<const void> owner);

 private:
  NcclCommunicator(CudaDevice& device, const NcclApi& api, NcclComm* comm)
      : device_(device), api_(api), comm_(comm) {}
  /// Waits while NCCL works on the last call (a non-blocking communicator's calls may return
  /// before they are done): false when `deadline` passed first; throws NCCL's failure of `call`.
  bool settle(const ir::Node& node, const char* call, Communicator::Deadline deadline);
  /// Stops NCCL's work on this communicator for good, keeping `owner` until the process exits.
  void abort(std::shared_ptr<const void> owner);

  CudaDevice& device_;
  const NcclApi& api_;
  NcclComm* comm_ = nullptr;  // null once aborted
};

}  // namespace lz::runtime::cuda
