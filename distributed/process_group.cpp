// lz::dist's process group on MPI: joining it, leaving it, barrier and local ranks.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <string>

#include "distributed/mpi_communicator.h"
#include "frontend/recording.h"
#include "lazuli/dist.h"
#include "lazuli/error.h"
#include "lazuli/tensor.h"
#include "support/environment.h"

namespace lz::dist {
namespace {

constexpr int64_t kDefaultTimeoutSeconds = 300;

struct Group {
  std::shared_ptr<MpiCommunicator> communicator;
  std::chrono::duration<double> timeout{};
  int local_rank = 0;
  bool initialized_mpi = false;  // init called MPI_Init, so finalize calls MPI_Finalize
};

std::mutex group_mutex;
std::unique_ptr<Group> group;  // guarded by group_mutex; null outside init..finalize

std::terminate_handler previous_terminate_handler = nullptr;

/// A rank that dies of an uncaught exception takes its group with it: the other ranks would
/// otherwise wait in their next collective for the whole timeout.
[[noreturn]] void abort_group_on_terminate() {
  if (is_initialized() && world_size() > 1) abort("an uncaught exception ended it");
  if (previous_terminate_handler != nullptr) previous_terminate_handler();
  std::abort();
}

std::chrono::duration<double> timeout_of(const InitOptions& options) {
  if (options.timeout_seconds > 0) return std::chrono::duration<double>(options.timeout_seconds);
  return std::chrono::seconds(
      support::integer_from_environment("LZ_DIST_TIMEOUT", 1).value_or(kDefaultTimeoutSeconds));
}

const char* thread_level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
    default: return "MPI_THREAD_MULTIPLE";
  }
}

/// A launcher's variable `name` (a rank or a count), or -1 when it is unset (or not a whole
/// number, which support::integer_from_environment reports).
int launcher_variable(const char* name) {
  return static_cast<int>(support::integer_from_environment(name, 0, INT32_MAX).value_or(-1));
}

/// A launcher's RANK and WORLD_SIZE, when set, must describe the group MPI formed: processes
/// started without mpirun each form a group of one.
void check_launcher(int rank, int size) {
  const int launcher_rank = launcher_variable("RANK");
  const int launcher_size = launcher_variable("WORLD_SIZE");
  if ((launcher_size >= 0 && launcher_size != size) ||
      (launcher_rank >= 0 && launcher_rank != rank)) {
    throw Error("[init] the launcher says RANK=" + std::to_string(launcher_rank) +
                " WORLD_SIZE=" + std::to_string(launcher_size) + ", but MPI formed rank " +
                std::to_string(rank) + " of " + std::to_string(size) +
                ": lazuli's process group runs on MPI, so start the ranks with mpirun (or a "
                "launcher that starts MPI processes, such as srun)");
  }
}

/// This rank's place among the ranks of its machine: LOCAL_RANK when the launcher sets it,
/// else its rank among the processes that share memory with it.
int find_local_rank() {
  if (const int launcher = launcher_variable("LOCAL_RANK"); launcher >= 0) return launcher;
  MPI_Comm local;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &local);
  int rank = 0;
  MPI_Comm_rank(local, &rank);
  MPI_Comm_free(&local);
  return rank;
}

const Group& joined(std::string_view op) {
  if (group == nullptr) {
    throw Error("[" + std::string(op) + "] there is no process group: call lz::dist::init() first");
  }
  return *group;
}

}  // namespace

void init(const InitOptions& options, std::source_location loc) try {
  std::lock_guard lock(group_mutex);
  if (group != nullptr) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) {
    throw Error("[init] MPI was finalized already, and cannot start again in this process");
  }
  auto joining = std::make_unique<Group>();
  int initialized = 0;
  MPI_Initialized(&initialized);
  int provided = MPI_THREAD_SINGLE;
  if (initialized) {
    MPI_Query_thread(&provided);
  } else {
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
    joining->initialized_mpi = true;
  }
  if (provided < MPI_THREAD_MULTIPLE) {
    throw Error(std::string("[init] MPI provides ") + thread_level_name(provided) +
                ", but lazuli calls MPI from its communication thread while the program may "
                "call barrier: initialize MPI with MPI_Init_thread(MPI_THREAD_MULTIPLE), or let "
                "lz::dist::init do it");
  }
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  check_launcher(rank, size);
  joining->local_rank = find_local_rank();
  joining->timeout = timeout_of(options);
  joining->communicator = std::make_shared<MpiCommunicator>(MPI_COMM_WORLD);
  runtime::install_communicator(joining->communicator, joining->timeout);
  group = std::move(joining);
  static const bool finalized_at_exit = [] { return std::atexit([] { finalize(); }) == 0; }();
  (void)finalized_at_exit;
  static const bool aborts_on_terminate = [] {
    previous_terminate_handler = std::set_terminate(abort_group_on_terminate);
    return true;
  }();
  (void)aborts_on_terminate;
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

void abort(const std::string& why, int status) {
  int initialized = 0;
  int finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized) {
    std::fprintf(stderr, "[lazuli] %s: ending the process\n", why.c_str());
    std::exit(status);
  }
  int rank = 0;
  int size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const std::string line = "[lazuli] rank " + std::to_string(rank) + " of " + std::to_string(size) +
                           ": " + why + "; ending every rank of the process group (MPI_Abort)\n";
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, status);
  std::_Exit(status);  // MPI_Abort does not return; this says so to the compiler
}

void finalize() {
  std::lock_guard lock(group_mutex);
  if (group == nullptr) return;
  try {
    lz::waitall();  // collectives still pending or on a stream run before the group goes
  } catch (const Error&) {
    // A failure belongs to the tensors that read it; leaving the group goes on.
  }
  runtime::install_communicator(nullptr, {});  // after the queued collectives
  const bool finalize_mpi = group->initialized_mpi;
  group.reset();  // frees the communicators before MPI goes
  if (finalize_mpi) MPI_Finalize();
}

int local_rank(std::source_location loc) try {
  std::lock_guard lock(group_mutex);
  return joined("local_rank").local_rank;
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

Device device(std::source_location loc) try {
  const int local = local_rank(loc);
  const int gpus = cuda::device_count();
  return gpus > 0 ? Device::cuda(local % gpus) : Device::cpu();
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

void barrier(std::source_location loc) try {
  std::shared_ptr<MpiCommunicator> communicator;
  std::chrono::duration<double> timeout{};
  {
    std::lock_guard lock(group_mutex);
    communicator = joined("barrier").communicator;
    timeout = group->timeout;
  }
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(timeout);
  if (!communicator->barrier(deadline)) {
    throw Error("[barrier] not every rank reached the barrier within " +
                std::to_string(timeout.count()) + " s (LZ_DIST_TIMEOUT)");
  }
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

}  // namespace lz::dist
