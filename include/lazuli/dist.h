// Data-parallel work across processes: a process group of ranks, and collectives between them
// (all_reduce, all_gather, reduce_scatter, broadcast) recorded lazily like every other op.
//
//   lz::dist::init();                                  // once, under mpirun
//   Tensor g = lz::dist::all_reduce(grad, lz::dist::ReduceOp::Mean);
//
// The process group runs on Open MPI: init, finalize, barrier, local_rank and device live in the
// library lazuli::dist (link it; it needs MPI), the collectives in lazuli itself. Collectives of
// CPU tensors move through MPI, those of CUDA tensors through NCCL (libnccl.so.2, loaded at the
// first one), one GPU per rank.
//
// A collective is an op of the IR (all_sum, all_max, all_min, all_gather, reduce_scatter,
// broadcast) that runs as a kernel of its own, on a communication thread beside the streams:
// kernels that do not read its result go on while it waits for the other ranks. Every rank
// must record the same collectives, of the same shapes and dtypes, in the same order, and reach
// them through the same blocking points, as the same program on every rank does: a rank runs its
// collectives in the order its launches reach them (within a launch, the order they were
// recorded), from one recording thread and one stream. Before data moves, the ranks compare what
// each is about to run; when they disagree, or one rank's operand failed, every rank fails that
// collective with the same message, naming each rank's op, shape and line, instead of hanging. A
// collective that the other ranks do not reach within the timeout (a rank died or stopped) fails at
// the blocking point that reads it, and the process group cannot be used afterwards.
#pragma once

#include <cstdint>
#include <source_location>
#include <string>
#include <vector>

#include "lazuli/autodiff.h"
#include "lazuli/tensor.h"

namespace lz::dist {

#define LZ_HERE std::source_location loc = std::source_location::current()

struct InitOptions {
  /// Seconds a collective waits for every rank before it fails; <= 0 takes LZ_DIST_TIMEOUT,
  /// else 300.
  double timeout_seconds = 0;
};

/// Joins the process group: initializes MPI (with thread support, as collectives run on a thread
/// of lazuli's own) unless the program already did, and installs the communicator. Under
/// `mpirun -np N` every process is one rank of N; a process started alone is a group of one.
/// When RANK or WORLD_SIZE are set (a launcher other than mpirun), they must agree with MPI's
/// view, or init throws naming both. Calling it again does nothing. (lazuli::dist)
void init(const InitOptions& options = {}, LZ_HERE);
/// Waits for the queued collectives, removes the communicator and finalizes MPI when init
/// initialized it. Runs at exit when the program did not call it. (lazuli::dist)
void finalize();
/// Whether init ran (and finalize did not).
bool is_initialized();

/// Ends every rank of the group now (MPI_Abort), saying on stderr which rank ended it and why:
/// for a rank that cannot go on, so that the others fail at once instead of waiting for their
/// collectives' timeout. A rank ended by an uncaught C++ exception calls it itself (from init on;
/// the Python package does the same for an uncaught Python exception). Without a group, it ends
/// this process. (lazuli::dist)
[[noreturn]] void abort(const std::string& why, int status = 1);

/// This process's rank, 0 <= rank < world_size(). Throws when init did not run.
int rank(LZ_HERE);
/// The number of ranks in the group.
int world_size(LZ_HERE);
/// This process's rank among those on its machine (to pick a GPU): MPI's shared-memory
/// neighbours, or LOCAL_RANK when a launcher sets it. (lazuli::dist)
int local_rank(LZ_HERE);
/// This rank's device for its work and collectives: CUDA device local_rank() modulo the number
/// of CUDA devices when this machine has any, so that the ranks of a machine take one GPU each
/// (NCCL moves their collectives), else the CPU (MPI moves them). Start at most as many ranks
/// on a machine as it has GPUs: NCCL refuses two ranks on one GPU. (lazuli::dist)
Device device(LZ_HERE);
/// Blocks until every rank has called barrier, or throws after the timeout. Pending work is not
/// waited for (call lz::waitall() first for that). (lazuli::dist)
void barrier(LZ_HERE);

enum class ReduceOp { Sum, Mean, Max, Min };

/// Every rank gets the elementwise reduction of all ranks' `x` (of one shape and dtype on every
/// rank). Sum takes no bool; Mean (the sum divided by world_size) takes floating dtypes; Max and
/// Min of bool are or and and.
Tensor all_reduce(const Tensor& x, ReduceOp op = ReduceOp::Sum, LZ_HERE);
/// The ranks' `x` concatenated along axis 0, rank 0's first: shape (world_size * n, ...) for x
/// of shape (n, ...); a 0-d x gives shape (world_size).
Tensor all_gather(const Tensor& x, LZ_HERE);
/// The reduction (Sum or Mean) of all ranks' `x`, split evenly along axis 0: rank r gets part r,
/// of shape (n / world_size, ...). n must be a multiple of world_size.
Tensor reduce_scatter(const Tensor& x, ReduceOp op = ReduceOp::Sum, LZ_HERE);
/// Every rank gets rank `root`'s `x` (of one shape and dtype on every rank).
Tensor broadcast(const Tensor& x, int root = 0, LZ_HERE);

// Data-parallel training, as PyTorch's DistributedDataParallel does it: every rank holds the same
// parameters, computes the loss of its own shard of each batch (lz::data::DataLoader's shard
// options) and applies the gradients averaged over the ranks, so that all ranks take the same
// step: the step one process would take on the combined batch when the shards are equal.
//
//   params = lz::dist::broadcast_parameters(params);          // the same start everywhere
//   auto [loss, grads] = lz::dist::value_and_grad(f, params);  // averaged gradients
//   optimizer.step(params, grads);

/// Rank `root`'s values of `parameters`, on every rank.
std::vector<Tensor> broadcast_parameters(const std::vector<Tensor>& parameters, int root = 0,
                                         LZ_HERE);

/// Gradient buckets of about 4 MiB: large enough that an all-reduce is not dominated by its
/// latency, small enough that the first ones finish while the backward pass goes on.
inline constexpr int64_t kDefaultBucketBytes = int64_t{4} << 20;

/// `gradients` (one per parameter, in the parameters' order) averaged over the ranks. They are
/// all-reduced in buckets of about `bucket_bytes`, last parameters first (the order a backward
/// pass computes them): each bucket is one all_reduce of its gradients joined end to end, which
/// runs on the communication thread as soon as its gradients are computed, while the stream
/// computes the gradients of the next bucket.
std::vector<Tensor> average_gradients(const std::vector<Tensor>& gradients,
                                      int64_t bucket_bytes = kDefaultBucketBytes, LZ_HERE);

/// lz::value_and_grad of `f` on this rank's data, with the gradients averaged over the ranks
/// (average_gradients). The value is this rank's own; all_reduce it with Mean for the group's.
ValueAndGrad value_and_grad(const ScalarFunction& f, const std::vector<Tensor>& params,
                            int64_t bucket_bytes = kDefaultBucketBytes, LZ_HERE);

/// The mean and (biased) variance of `x` over `axes` as if every rank's x were one batch: the
/// statistics of a synchronized batch normalization. Every rank's x has the same shape. Two
/// all-reduces: the mean first, then the squared deviations from it, which stays accurate when
/// the mean is large against the spread.
struct Moments {
  Tensor mean;
  Tensor variance;
};
Moments moments(const Tensor& x, Axes axes, bool keepdims = false, LZ_HERE);

#undef LZ_HERE

}  // namespace lz::dist
