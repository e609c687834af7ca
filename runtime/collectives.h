// Collectives (all_sum, all_gather, ...) across the ranks of the process group, run off the
// streams on one communication thread.
//
// Why a thread of its own: a collective waits for the other ranks. Run on a stream, that wait
// would hold up every kernel queued behind it; run here, the stream goes on with the kernels that
// do not read the collective's result (the rest of a backward pass while a gradient bucket is
// all-reduced), and a kernel that does read it waits for its promise.
//
// Why an exchange before each collective: ranks that reach different collectives (another
// shape, another op, one rank's operand failed) would otherwise hang or move garbage. Every rank
// first sends the others a small description of the collective it is about to run: its
// sequence number (the order the rank recorded collectives in), op, operand type, root and the
// line that recorded it. Only when all descriptions agree does data move; otherwise every rank
// fails the collective with the same message, naming what each rank had.
//
// Order: the communication thread runs collectives one at a time, in the order the streams queue
// them, which is the order of the launches and, within one, of the plan's kernels. Ranks that
// record the same program reach the same collectives in the same order; the sequence numbers
// catch a program that does not.
#pragma once

#include <chrono>
#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "ir/node.h"
#include "lazuli/log_level.h"
#include "memory/buffer.h"

namespace lz::runtime {

/// The transport under the collectives: MPI for host buffers (distributed/). Its calls come from
/// the communication thread only, one at a time. Collectives of CUDA tensors move through NCCL
/// (runtime/cuda/nccl.h), whose ranks find each other through this transport.
class Communicator {
 public:
  using Deadline = std::chrono::steady_clock::time_point;

  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// The transport, for the log: "MPI".
  virtual std::string name() const = 0;
  // A call that returns false left its transfer in flight (MPI cannot cancel a collective): a
  // rank arriving late may still write into the memory, so the communicator keeps `owner`,
  // which owns that memory, until the process exits (keep_until_exit).

  /// Every rank's `mine` (the same count of bytes on each), rank after rank, into `all`.
  /// Returns false when the deadline passed first.
  virtual bool all_gather_bytes(std::span<const std::byte> mine, std::span<std::byte> all,
                                Deadline deadline, std::shared_ptr<const void> owner) = 0;
  /// The data movement of collective `node` (whose type every rank has checked) from `input`
  /// into `output`. Returns false when the deadline passed first.
  virtual bool move(const ir::Node& node, const memory::Buffer& input, memory::Buffer& output,
                    Deadline deadline, std::shared_ptr<const void> owner) = 0;
};

/// Tests `done` until it answers true (true) or `deadline` passes (false). The transports make
/// progress inside their tests, so the thread tests again at once, yielding the core to the
/// compute threads between tests; after a second (a straggler or a stopped rank, where latency
/// no longer matters) it sleeps between tests.
bool poll_until(const std::function<bool()>& done, Communicator::Deadline deadline);

/// Keeps `owner` until the process exits: memory that a transfer left in flight by a timeout
/// may still write into (neither MPI nor NCCL can take back a collective).
void keep_until_exit(std::shared_ptr<const void> owner);

/// Makes `communicator` the process group's, whose collectives time out after `timeout`; null
/// takes it away once the queued collectives have run (lz::dist::finalize).
void install_communicator(std::shared_ptr<Communicator> communicator,
                          std::chrono::duration<double> timeout);
/// The installed communicator, or null.
std::shared_ptr<Communicator> installed_communicator();

/// The next sequence number for a collective this rank records (0, 1, 2, ...).
uint64_t next_collective_sequence();

/// Queues collective `node` (its kernel's one node) on the communication thread and returns its
/// result as a promise that the thread fulfils or fails. `input` is the operand's buffer, or
/// null with `input_error` saying why this rank has none: the other ranks learn it from the
/// exchange and fail too, instead of waiting for this rank. Logs one line under LZ_LOG.
std::shared_ptr<memory::Buffer> queue_collective(ir::NodePtr node,
                                                 std::shared_ptr<memory::Buffer> input,
                                                 std::exception_ptr input_error,
                                                 LogLevel log_level);

}  // namespace lz::runtime
