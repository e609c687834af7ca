#include "runtime/cuda/nccl.h"

#include "ir/printer.h"
#include "lazuli/error.h"
#include "support/shared_library.h"

namespace lz::runtime::cuda {

using NcclResult = int;  // ncclResult_t: ncclSuccess is 0

/// ncclConfig_t as NCCL 2.14 laid it out, which it says in `version`: NCCL copies `size` bytes of
/// it and gives the fields a later NCCL added their defaults, so one layout serves every NCCL
/// since 2.14. (NCCL_COMM_BLOCKING=1 in the environment overrides `blocking`, and with it the
/// deadlines of joining and of collectives.)
struct NcclConfig {
  size_t size = sizeof(NcclConfig);
  unsigned magic = 0xcafebeef;
  unsigned version = 21400;  // NCCL_VERSION(2, 14, 0)
  int blocking = 0;          // calls return at once; ncclCommGetAsyncError says when done
};

/// Entry points of libnccl.so.2 (nccl.h); the unique id is passed by value, as nccl.h declares.
struct NcclApi {
  NcclResult (*get_unique_id)(NcclUniqueId* id);
  NcclResult (*comm_init_rank_config)(NcclComm** comm, int ranks, NcclUniqueId id, int rank,
                                      NcclConfig* config);
  NcclResult (*comm_destroy)(NcclComm* comm);
  NcclResult (*comm_abort)(NcclComm* comm);
  NcclResult (*comm_get_async_error)(NcclComm* comm, NcclResult* error);
  const char* (*get_error_string)(NcclResult result);
  const char* (*get_last_error)(NcclComm* comm);
  NcclResult (*all_reduce)(const void* send, void* receive, size_t count, int type, int op,
                           NcclComm* comm, CUstream stream);
  NcclResult (*all_gather)(const void* send, void* receive, size_t send_count, int type,
                           NcclComm* comm, CUstream stream);
  NcclResult (*reduce_scatter)(const void* send, void* receive, size_t receive_count, int type,
                               int op, NcclComm* comm, CUstream stream);
  NcclResult (*broadcast)(const void* send, void* receive, size_t count, int type, int root,
                          NcclComm* comm, CUstream stream);
};

namespace {

constexpr NcclResult kNcclSuccess = 0;
constexpr NcclResult kNcclInProgress = 7;

// ncclDataType_t and ncclRedOp_t values (nccl.h).
constexpr int kNcclUint8 = 1;
constexpr int kNcclInt32 = 2;
constexpr int kNcclInt64 = 4;
constexpr int kNcclFloat32 = 7;
constexpr int kNcclFloat64 = 8;
constexpr int kNcclSum = 0;
constexpr int kNcclMax = 2;
constexpr int kNcclMin = 3;

/// NCCL, loaded at the first collective of CUDA tensors; null (with why) when it cannot be.
const NcclApi* nccl(std::string* why) {
  static std::string failure;
  static const NcclApi* const loaded = []() -> const NcclApi* {
    void* library = support::load_library(
        {"libnccl.so.2", "libnccl.so", "/usr/local/cuda/lib64/libnccl.so.2"}, failure);
    if (library == nullptr) return nullptr;
    const auto resolve = [&](const char* symbol, auto& entry) {
      return support::resolve_symbol(library, "libnccl", symbol, entry, failure);
    };
    auto* api = new NcclApi();
    if (!resolve("ncclGetUniqueId", api->get_unique_id) ||
        !resolve("ncclCommInitRankConfig", api->comm_init_rank_config) ||
        !resolve("ncclCommDestroy", api->comm_destroy) ||
        !resolve("ncclCommAbort", api->comm_abort) ||
        !resolve("ncclCommGetAsyncError", api->comm_get_async_error) ||
        !resolve("ncclGetErrorString", api->get_error_string) ||
        !resolve("ncclGetLastError", api->get_last_error) ||
        !resolve("ncclAllReduce", api->all_reduce) || !resolve("ncclAllGather", api->all_gather) ||
        !resolve("ncclReduceScatter", api->reduce_scatter) ||
        !resolve("ncclBroadcast", api->broadcast)) {
      delete api;
      return nullptr;
    }
    return api;
  }();
  if (loaded == nullptr && why != nullptr) *why = failure;
  return loaded;
}

/// NCCL, or an error naming `node` when it does not load.
const NcclApi& loaded_nccl(const ir::Node& node) {
  std::string why;
  const NcclApi* api = nccl(&why);
  if (api == nullptr) throw ir::recorded_error(node, "NCCL is not available: " + why);
  return *api;
}

/// "ncclAllReduce failed: unhandled cuda error (...)": NCCL's name for `result` and, when the
/// communicator has one, its last message.
std::string failure_text(const NcclApi& api, NcclComm* comm, NcclResult result, const char* call) {
  std::string text = std::string(call) + " failed: " + api.get_error_string(result);
  if (const char* last = api.get_last_error(comm); last != nullptr && *last != '\0') {
    text += std::string(" (") + last + ")";
  }
  return text;
}

/// bool is one byte of 0 or 1: its max and min are or and and.
int nccl_type(DType dtype) {
  switch (dtype) {
    case DType::Float32: return kNcclFloat32;
    case DType::Float64: return kNcclFloat64;
    case DType::Int32: return kNcclInt32;
    case DType::Int64: return kNcclInt64;
    case DType::Bool: return kNcclUint8;
  }
  return kNcclUint8;
}

int nccl_reduction(ir::Op op) {
  switch (op) {
    case ir::Op::AllMax: return kNcclMax;
    case ir::Op::AllMin: return kNcclMin;
    default: return kNcclSum;
  }
}

}  // namespace

bool nccl_available(std::string* why) { return nccl(why) != nullptr; }

NcclUniqueId make_nccl_unique_id(const ir::Node& node) {
  const NcclApi& api = loaded_nccl(node);
  NcclUniqueId id;
  if (const NcclResult result = api.get_unique_id(&id); result != kNcclSuccess) {
    throw ir::recorded_error(node, failure_text(api, nullptr, result, "ncclGetUniqueId"));
  }
  return id;
}

std::unique_ptr<NcclCommunicator> NcclCommunicator::join(CudaDevice& device, const NcclUniqueId& id,
                                                         int rank, int size, const ir::Node& node,
                                                         Communicator::Deadline deadline) {
  const NcclApi& api = loaded_nccl(node);
  device.make_current();  // NCCL takes the current context's device as the rank's GPU
  NcclConfig config;
  NcclComm* comm = nullptr;
  const NcclResult result = api.comm_init_rank_config(&comm, size, id, rank, &config);
  if (result != kNcclSuccess && result != kNcclInProgress) {
    throw ir::recorded_error(node, failure_text(api, nullptr, result, "ncclCommInitRankConfig"));
  }
  // Owned from here, so that a failure or a timeout aborts the half-joined communicator.
  std::unique_ptr<NcclCommunicator> joined(new NcclCommunicator(device, api, comm));
  try {
    if (!joined->settle(node, "ncclCommInitRankConfig", deadline)) {
      joined->abort(nullptr);
      return nullptr;
    }
  } catch (...) {
    joined->abort(nullptr);
    throw;
  }
  return joined;
}

NcclCommunicator::~NcclCommunicator() {
  if (comm_ == nullptr) return;
  (void)device_.driver().api.ctx_set_current(device_.context());
  (void)api_.comm_destroy(comm_);
}

bool NcclCommunicator::settle(const ir::Node& node, const char* call,
                              Communicator::Deadline deadline) {
  NcclResult state = kNcclInProgress;
  const bool settled = poll_until(
      [&] {
        // A failure to ask is a failure too, rather than a wait until the deadline.
        if (const NcclResult asked = api_.comm_get_async_error(comm_, &state);
            asked != kNcclSuccess) {
          state = asked;
        }
        return state != kNcclInProgress;
      },
      deadline);
  if (settled && state != kNcclSuccess) {
    throw ir::recorded_error(node, failure_text(api_, comm_, state, call));
  }
  return settled;
}

void NcclCommunicator::abort(std::shared_ptr<const void> owner) {
  if (comm_ != nullptr) {
    device_.make_current();
    (void)api_.comm_abort(comm_);
    comm_ = nullptr;
  }
  // NCCL's kernels may still run over the memory until the abort has stopped them.
  if (owner != nullptr) keep_until_exit(std::move(owner));
}

bool NcclCommunicator::move(const ir::Node& node, const memory::Buffer& input, CudaMemory& output,
                            Communicator::Deadline deadline, std::shared_ptr<const void> owner) {
  if (comm_ == nullptr) {
    throw ir::recorded_error(node,
                             "NCCL's communicator was aborted after an earlier collective "
                             "failed or timed out");
  }
  try {
    const std::string op(ir::op_name(node.op));
    const uint64_t from = read_address(device_, kCollectiveStream, input, op);
    const CUstream stream = device_.stream(kCollectiveStream);  // makes the context current
    const auto* send = reinterpret_cast<const void*>(from);
    auto* receive = reinterpret_cast<void*>(output.address());
    const int type = nccl_type(node.dtype);
    const auto count = static_cast<size_t>(input.size());
    NcclResult result = kNcclSuccess;
    const char* call = "";
    switch (node.op) {
      case ir::Op::AllSum:
      case ir::Op::AllMax:
      case ir::Op::AllMin:
        call = "ncclAllReduce";
        result =
            api_.all_reduce(send, receive, count, type, nccl_reduction(node.op), comm_, stream);
        break;
      case ir::Op::AllGather:
        call = "ncclAllGather";
        result = api_.all_gather(send, receive, count, type, comm_, stream);
        break;
      case ir::Op::ReduceScatter:
        call = "ncclReduceScatter";
        result = api_.reduce_scatter(send, receive, static_cast<size_t>(node.size()), type,
                                     kNcclSum, comm_, stream);
        break;
      case ir::Op::Broadcast:
        call = "ncclBroadcast";
        result = api_.broadcast(send, receive, count, type,
                                static_cast<int>(node.collective().root), comm_, stream);
        break;
      default: throw ir::recorded_error(node, "is not a collective: NCCL cannot run it");
    }
    if (result != kNcclSuccess && result != kNcclInProgress) {
      throw ir::recorded_error(node, failure_text(api_, comm_, result, call));
    }
    // The collective is on the stream once NCCL has settled the call.
    if (!settle(node, call, deadline)) {
      abort(std::move(owner));
      return false;
    }
    auto written = std::make_shared<CudaEvent>(device_);
    written->record(stream);
    output.set_written(written);
    // Waiting here, not at the blocking point, is what lets a stopped rank fail the collective
    // in time: NCCL's kernel would wait for it for ever. A failure NCCL reports meanwhile (a
    // peer went away) ends the wait; it may also end the kernel, so it is asked once more after.
    const auto failed = [&] {
      NcclResult state = kNcclSuccess;
      (void)api_.comm_get_async_error(comm_, &state);
      if (state != kNcclSuccess && state != kNcclInProgress) {
        throw ir::recorded_error(node, failure_text(api_, comm_, state, call));
      }
      return false;
    };
    if (!poll_until([&] { return failed() || written->reached(); }, deadline)) {
      abort(std::move(owner));
      return false;
    }
    failed();
    written->synchronize(op.c_str());  // throws a fault the device reported
    return true;
  } catch (...) {
    abort(std::move(owner));
    throw;
  }
}

}  // namespace lz::runtime::cuda
