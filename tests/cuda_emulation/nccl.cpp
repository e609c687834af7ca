// The fake libnccl.so.2: the NCCL entry points lazuli resolves (runtime/cuda/nccl.cpp), with
// nccl.h's signatures and result codes, between the processes of one machine. The unique id
// names a POSIX shared-memory segment; the ranks that join with it map it, and each collective,
// queued on the stream given like NCCL's kernel, moves its data through the segment when the
// stream reaches it: in rounds of at most kSlotBytes per rank, each rank copying its part into
// its slot, waiting for the others at a counter of the segment, and reading theirs. Reductions
// add in rank order, so every rank computes the same bits.
//
// Joining (ncclCommInitRankConfig) may be non-blocking, as lazuli asks: the call returns
// ncclInProgress and a thread waits for the other ranks, until which ncclCommGetAsyncError says
// ncclInProgress. Collectives are queued at the call, blocking or not.
//
// A rank's ncclCommAbort marks the segment: the others' waits end, and ncclCommGetAsyncError
// reports ncclRemoteError to them, as NCCL does when a peer goes away.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>

#include "tests/cuda_emulation/driver_state.h"

namespace lz::cuda_emulation {
namespace {

using NcclResult = int;  // nccl.h's ncclResult_t
constexpr NcclResult kNcclSuccess = 0;
constexpr NcclResult kNcclSystemError = 2;
constexpr NcclResult kNcclInvalidArgument = 4;
constexpr NcclResult kNcclInvalidUsage = 5;
constexpr NcclResult kNcclRemoteError = 6;
constexpr NcclResult kNcclInProgress = 7;

// nccl.h's ncclRedOp_t values emulated.
constexpr int kSum = 0;
constexpr int kProd = 1;
constexpr int kMax = 2;
constexpr int kMin = 3;

/// Bytes each rank stages per round.
constexpr size_t kSlotBytes = size_t{1} << 20;
/// How long joining waits for the other ranks before failing (NCCL would wait for ever).
constexpr auto kJoinPatience = std::chrono::seconds(120);

constexpr char kIdMagic[16] = "lazuli-emu-nccl";

struct UniqueId {  // nccl.h's ncclUniqueId: 128 bytes
  char magic[16];
  char name[112];
};
static_assert(sizeof(UniqueId) == 128);

/// nccl.h's ncclConfig_t as NCCL 2.14 laid it out; later versions add fields after these.
struct Config {
  size_t size;
  unsigned magic;
  unsigned version;  // NCCL_VERSION of the nccl.h that made it
  int blocking;
};
constexpr unsigned kConfigMagic = 0xcafebeef;

/// The start of the shared segment; the ranks' slots follow it.
struct alignas(64) Segment {
  std::atomic<uint64_t> joined;
  std::atomic<uint64_t> arrivals;  // at waits: the n-th wait of every rank ends at n * ranks
  std::atomic<int32_t> aborted;
};
static_assert(std::atomic<uint64_t>::is_always_lock_free);  // shared between processes

struct Comm {
  Context* context = nullptr;
  int rank = 0;
  int ranks = 1;
  Segment* segment = nullptr;  // null for a single rank
  size_t mapped_bytes = 0;
  uint64_t waits = 0;  // this rank's waits so far; by the stream running the collectives
  std::atomic<bool> aborted{false};
  std::atomic<NcclResult> async_error{kNcclSuccess};

  ~Comm() {
    if (segment != nullptr) munmap(segment, mapped_bytes);
  }
  std::byte* slot(int of) const {
    return reinterpret_cast<std::byte*>(segment + 1) + static_cast<size_t>(of) * kSlotBytes;
  }
};

/// Live communicators by handle; a queued collective holds its own until it has run.
struct Comms {
  std::mutex mutex;
  std::unordered_map<Comm*, std::shared_ptr<Comm>> live;
  std::string last_error;
};

Comms& comms() {
  static Comms* const registry = new Comms();
  return *registry;
}

std::shared_ptr<Comm> find_comm(void* handle) {
  std::lock_guard lock(comms().mutex);
  const auto found = comms().live.find(static_cast<Comm*>(handle));
  return found == comms().live.end() ? nullptr : found->second;
}

NcclResult refuse(NcclResult result, const std::string& why) {
  report_misuse(why);
  std::lock_guard lock(comms().mutex);
  comms().last_error = why;
  return result;
}

/// Waits until every rank has arrived as often as this one; false when a rank aborted (the
/// collective ends there, and the communicator reports it).
bool wait_for_ranks(Comm& comm) {
  const uint64_t target = ++comm.waits * static_cast<uint64_t>(comm.ranks);
  comm.segment->arrivals.fetch_add(1);
  const auto start = std::chrono::steady_clock::now();
  while (comm.segment->arrivals.load() < target) {
    if (comm.aborted.load() || comm.segment->aborted.load() != 0) {
      if (!comm.aborted.load()) comm.async_error = kNcclRemoteError;
      return false;
    }
    if (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(100)) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }
  return true;
}

size_t type_size(int type) {
  switch (type) {
    case 0:
    case 1: return 1;  // int8, uint8
    case 2:
    case 3:
    case 7: return 4;  // int32, uint32, float32
    case 4:
    case 5:
    case 8: return 8;   // int64, uint64, float64
    default: return 0;  // float16, bfloat16, float8: not emulated
  }
}

template <class T>
void combine(std::byte* into, const std::byte* from, size_t count, int op) {
  auto* a = reinterpret_cast<T*>(into);
  const auto* b = reinterpret_cast<const T*>(from);
  for (size_t i = 0; i < count; ++i) {
    switch (op) {
      case kSum: a[i] = static_cast<T>(a[i] + b[i]); break;
      case kProd: a[i] = static_cast<T>(a[i] * b[i]); break;
      case kMax: a[i] = std::max(a[i], b[i]); break;
      default: a[i] = std::min(a[i], b[i]); break;
    }
  }
}

/// into[i] = into[i] op from[i] for `count` elements of NCCL type `type`.
void reduce(std::byte* into, const std::byte* from, size_t count, int type, int op) {
  switch (type) {
    case 0: combine<int8_t>(into, from, count, op); break;
    case 1: combine<uint8_t>(into, from, count, op); break;
    case 2: combine<int32_t>(into, from, count, op); break;
    case 3: combine<uint32_t>(into, from, count, op); break;
    case 4: combine<int64_t>(into, from, count, op); break;
    case 5: combine<uint64_t>(into, from, count, op); break;
    case 7: combine<float>(into, from, count, op); break;
    default: combine<double>(into, from, count, op); break;
  }
}

enum class Kind { AllReduce, AllGather, ReduceScatter, Broadcast };

/// One collective as queued: `count` is per rank (the operand's elements; for reduce_scatter,
/// the result's).
struct Collective {
  Kind kind;
  const std::byte* send;
  std::byte* receive;
  size_t count;
  int type;
  int op;  // the reduction
  int root;
  const char* call;
};

/// Runs `collective` for `comm` when its stream reaches it.
void run(Comm& comm, const Collective& c) {
  const size_t element = type_size(c.type);
  const int parts = c.kind == Kind::ReduceScatter ? comm.ranks : 1;
  const size_t send_elements = c.count * static_cast<size_t>(parts);
  const size_t receive_elements =
      c.kind == Kind::AllGather ? c.count * static_cast<size_t>(comm.ranks) : c.count;
  Context& context = *comm.context;
  const auto on_device = [&](const std::byte* pointer, size_t elements) {
    return elements == 0 || device_holding(reinterpret_cast<CUdeviceptr>(pointer),
                                           elements * element) == context.device;
  };
  if (!on_device(c.send, send_elements) || !on_device(c.receive, receive_elements)) {
    fault(context, kErrorIllegalAddress,
          std::string(c.call) + " reads or writes outside the memory of its communicator's device");
    return;
  }
  if (comm.ranks == 1) {
    if (c.receive != c.send) std::memmove(c.receive, c.send, send_elements * element);
    return;
  }
  const size_t per_round = kSlotBytes / element / static_cast<size_t>(parts);
  for (size_t done = 0; done < c.count; done += per_round) {
    const size_t n = std::min(per_round, c.count - done);
    const size_t bytes = n * element;
    std::byte* mine = comm.slot(comm.rank);
    if (c.kind != Kind::Broadcast || comm.rank == c.root) {
      for (int part = 0; part < parts; ++part) {
        std::memcpy(mine + static_cast<size_t>(part) * bytes,
                    c.send + (static_cast<size_t>(part) * c.count + done) * element, bytes);
      }
    }
    if (!wait_for_ranks(comm)) return;
    switch (c.kind) {
      case Kind::AllReduce:
      case Kind::ReduceScatter: {
        // This rank's part of every rank's slot, reduced in rank order.
        const size_t offset = c.kind == Kind::ReduceScatter ? comm.rank * bytes : 0;
        std::byte* out = c.receive + done * element;
        std::memcpy(out, comm.slot(0) + offset, bytes);
        for (int rank = 1; rank < comm.ranks; ++rank) {
          reduce(out, comm.slot(rank) + offset, n, c.type, c.op);
        }
        break;
      }
      case Kind::AllGather:
        for (int rank = 0; rank < comm.ranks; ++rank) {
          std::memcpy(c.receive + (static_cast<size_t>(rank) * c.count + done) * element,
                      comm.slot(rank), bytes);
        }
        break;
      case Kind::Broadcast:
        std::memcpy(c.receive + done * element, comm.slot(c.root), bytes);
        break;
    }
    if (!wait_for_ranks(comm)) return;  // the slots are free for the next round
  }
}

/// Checks and queues `collective` on `stream_handle`, in the communicator's context.
NcclResult queue(void* handle, CUstream stream_handle, const Collective& collective) {
  const std::shared_ptr<Comm> comm = find_comm(handle);
  if (comm == nullptr)
    return refuse(kNcclInvalidArgument, std::string(collective.call) + ": not a live communicator");
  if (comm->aborted.load()) {
    return refuse(kNcclInvalidUsage,
                  std::string(collective.call) + ": the communicator was aborted");
  }
  if (type_size(collective.type) == 0) {
    return refuse(kNcclInvalidArgument, std::string(collective.call) + ": data type " +
                                            std::to_string(collective.type) + " is not emulated");
  }
  if (collective.op < kSum || collective.op > kMin) {
    return refuse(kNcclInvalidArgument, std::string(collective.call) + ": reduction " +
                                            std::to_string(collective.op) + " is not emulated");
  }
  if (collective.root < 0 || collective.root >= comm->ranks) {
    return refuse(kNcclInvalidArgument, std::string(collective.call) + ": root " +
                                            std::to_string(collective.root) + " is no rank");
  }
  Stream* stream = find_stream(stream_handle, *comm->context);
  if (stream == nullptr || &stream->context() != comm->context) {
    return refuse(kNcclInvalidArgument, std::string(collective.call) +
                                            ": the stream is not one of the communicator's device");
  }
  enqueue(*stream, [comm, collective] { run(*comm, collective); });
  return kNcclSuccess;
}

/// Waits until every rank has joined `comm`'s segment, named `name`, then takes the name away
/// (every rank has it mapped). ncclSystemError when they do not within kJoinPatience, or when
/// the communicator is aborted first.
NcclResult wait_for_join(Comm& comm, const std::string& name) {
  const auto start = std::chrono::steady_clock::now();
  while (comm.segment->joined.load() < static_cast<uint64_t>(comm.ranks)) {
    if (comm.aborted.load() || std::chrono::steady_clock::now() - start > kJoinPatience) {
      shm_unlink(name.c_str());
      std::lock_guard lock(comms().mutex);
      comms().last_error = "ncclCommInitRankConfig: the other ranks did not join";
      return kNcclSystemError;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  shm_unlink(name.c_str());
  return kNcclSuccess;
}

}  // namespace
}  // namespace lz::cuda_emulation

using namespace lz::cuda_emulation;  // NOLINT: the entry points below are C functions

LZ_EMULATION_EXPORT NcclResult ncclGetVersion(int* version) {
  if (version == nullptr) return kNcclInvalidArgument;
  *version = 22800;
  return kNcclSuccess;
}

LZ_EMULATION_EXPORT NcclResult ncclGetUniqueId(UniqueId* id) {
  if (id == nullptr) return kNcclInvalidArgument;
  static std::atomic<int> made{0};
  std::memset(id, 0, sizeof *id);
  std::memcpy(id->magic, kIdMagic, sizeof kIdMagic);
  const std::string name =
      "/lazuli-nccl-" + std::to_string(getpid()) + "-" + std::to_string(made.fetch_add(1));
  std::memcpy(id->name, name.c_str(), name.size() + 1);
  shm_unlink(id->name);  // a segment left by an earlier process of this pid, which crashed
  return kNcclSuccess;
}

LZ_EMULATION_EXPORT NcclResult ncclCommInitRankConfig(void** handle, int ranks, UniqueId id,
                                                      int rank, const Config* config) {
  if (handle == nullptr || ranks < 1 || rank < 0 || rank >= ranks) {
    return refuse(kNcclInvalidArgument, "ncclCommInitRankConfig: rank " + std::to_string(rank) +
                                            " of " + std::to_string(ranks) + " is no rank");
  }
  if (std::memcmp(id.magic, kIdMagic, sizeof kIdMagic) != 0) {
    return refuse(kNcclInvalidArgument, "ncclCommInitRankConfig: not an id from ncclGetUniqueId");
  }
  if (config != nullptr && (config->magic != kConfigMagic || config->size < sizeof(Config))) {
    return refuse(kNcclInvalidArgument,
                  "ncclCommInitRankConfig: the config was not made by NCCL_CONFIG_INITIALIZER");
  }
  // blocking is read from NCCL 2.14 on; unset, it is NCCL's default, blocking.
  const bool blocking = config == nullptr || config->version < 21400 || config->blocking != 0;
  Context* context = current_context();
  if (context == nullptr) {
    return refuse(kNcclInvalidUsage, "ncclCommInitRankConfig: no CUDA context is current");
  }
  auto comm = std::make_shared<Comm>();
  comm->context = context;
  comm->rank = rank;
  comm->ranks = ranks;
  if (ranks > 1) {
    comm->mapped_bytes = sizeof(Segment) + static_cast<size_t>(ranks) * kSlotBytes;
    const int fd = shm_open(id.name, O_CREAT | O_RDWR, 0600);
    if (fd < 0 || ftruncate(fd, static_cast<off_t>(comm->mapped_bytes)) != 0) {
      if (fd >= 0) close(fd);
      return refuse(kNcclSystemError, std::string("ncclCommInitRankConfig: shm_open(") + id.name +
                                          "): " + std::strerror(errno));
    }
    void* mapped = mmap(nullptr, comm->mapped_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (mapped == MAP_FAILED) {
      return refuse(kNcclSystemError,
                    std::string("ncclCommInitRankConfig: mmap: ") + std::strerror(errno));
    }
    comm->segment = static_cast<Segment*>(mapped);  // zero-filled by ftruncate
    comm->segment->joined.fetch_add(1);
  }
  {
    std::lock_guard lock(comms().mutex);
    comms().live.emplace(comm.get(), comm);
  }
  *handle = comm.get();
  if (ranks == 1) return kNcclSuccess;
  const std::string name = id.name;
  if (blocking) {
    const NcclResult joined = wait_for_join(*comm, name);
    if (joined != kNcclSuccess) {
      std::lock_guard lock(comms().mutex);
      comms().live.erase(comm.get());
    }
    return joined;
  }
  // Non-blocking: the others are waited for on a thread of the communicator's own, and
  // ncclCommGetAsyncError says ncclInProgress until they have joined.
  comm->async_error = kNcclInProgress;
  std::thread([comm, name] { comm->async_error = wait_for_join(*comm, name); }).detach();
  return kNcclInProgress;
}

LZ_EMULATION_EXPORT NcclResult ncclCommDestroy(void* handle) {
  std::lock_guard lock(comms().mutex);
  return comms().live.erase(static_cast<Comm*>(handle)) == 1 ? kNcclSuccess : kNcclInvalidArgument;
}

LZ_EMULATION_EXPORT NcclResult ncclCommAbort(void* handle) {
  const std::shared_ptr<Comm> comm = find_comm(handle);
  if (comm == nullptr) return kNcclInvalidArgument;
  comm->aborted = true;
  if (comm->segment != nullptr) comm->segment->aborted = 1;
  return ncclCommDestroy(handle);
}

LZ_EMULATION_EXPORT NcclResult ncclCommGetAsyncError(void* handle, NcclResult* error) {
  const std::shared_ptr<Comm> comm = find_comm(handle);
  if (comm == nullptr || error == nullptr) return kNcclInvalidArgument;
  *error = comm->async_error.load();
  return kNcclSuccess;
}

LZ_EMULATION_EXPORT const char* ncclGetErrorString(NcclResult result) {
  switch (result) {
    case 0: return "no error";
    case 1: return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
    case 2: return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case 3: return "internal error - please report this issue to the NCCL developers";
    case 4: return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case 5: return "invalid usage (run with NCCL_DEBUG=WARN for details)";
    case 6: return "remote process exited or there was a network error";
    case 7: return "NCCL operation in progress";
    default: return "unknown result code";
  }
}

LZ_EMULATION_EXPORT const char* ncclGetLastError(void*) {
  static thread_local std::string copy;  // the text stays valid until this thread's next call
  std::lock_guard lock(comms().mutex);
  copy = comms().last_error;
  return copy.c_str();
}

LZ_EMULATION_EXPORT NcclResult ncclAllReduce(const void* send, void* receive, size_t count,
                                             int type, int op, void* comm, CUstream stream) {
  return queue(comm, stream,
               {Kind::AllReduce, static_cast<const std::byte*>(send),
                static_cast<std::byte*>(receive), count, type, op, 0, "ncclAllReduce"});
}

LZ_EMULATION_EXPORT NcclResult ncclAllGather(const void* send, void* receive, size_t send_count,
                                             int type, void* comm, CUstream stream) {
  return queue(comm, stream,
               {Kind::AllGather, static_cast<const std::byte*>(send),
                static_cast<std::byte*>(receive), send_count, type, kSum, 0, "ncclAllGather"});
}

LZ_EMULATION_EXPORT NcclResult ncclReduceScatter(const void* send, void* receive,
                                                 size_t receive_count, int type, int op, void* comm,
                                                 CUstream stream) {
  return queue(comm, stream,
               {Kind::ReduceScatter, static_cast<const std::byte*>(send),
                static_cast<std::byte*>(receive), receive_count, type, op, 0, "ncclReduceScatter"});
}

LZ_EMULATION_EXPORT NcclResult ncclBroadcast(const void* send, void* receive, size_t count,
                                             int type, int root, void* comm, CUstream stream) {
  return queue(comm, stream,
               {Kind::Broadcast, static_cast<const std::byte*>(send),
                static_cast<std::byte*>(receive), count, type, kSum, root, "ncclBroadcast"});
}
