#include "runtime/collectives.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "ir/printer.h"
#include "lazuli/error.h"
#include "runtime/cuda/nccl.h"
#include "support/statistics.h"
#include "support/trace.h"

namespace lz::runtime {
namespace {

using BufferPtr = std::shared_ptr<memory::Buffer>;
using Clock = std::chrono::steady_clock;

/// What one rank is about to run, as every rank receives it: fixed-size text fields, so the
/// exchange is one all-gather of equal counts.
struct Descriptor {
  uint64_t sequence = 0;
  uint64_t operand_hash = 0;  // of the operand's whole type text, which `operand` may cut short
  int32_t op = 0;
  int32_t root = 0;
  int32_t failed = 0;  // this rank has no operand (or no memory for the result)
  char operand[64] = {};
  char line[160] = {};
  char failure[256] = {};
};

/// `text` into a fixed field, ending in "..." when it does not fit.
void copy_text(char* field, size_t capacity, const std::string& text) {
  const std::string fitted = text.size() < capacity ? text : text.substr(0, capacity - 4) + "...";
  std::memcpy(field, fitted.data(), fitted.size());
  field[fitted.size()] = '\0';
}

/// "1.5 s": a timeout as people write it.
std::string seconds_text(Clock::duration duration) {
  char text[32];
  std::snprintf(text, sizeof text, "%g s", std::chrono::duration<double>(duration).count());
  return text;
}

std::string line_of(const ir::Node& node) {
  return std::string(node.location.file_name()) + ":" + std::to_string(node.location.line());
}

std::string what_of(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& failure) {
    return failure.what();
  } catch (...) {
    return "unknown failure";
  }
}

/// "all_sum of f32[4] (collective #3, recorded at train.cpp:40)"
std::string describe(const Descriptor& descriptor) {
  std::string text =
      std::string(ir::op_name(static_cast<ir::Op>(descriptor.op))) + " of " + descriptor.operand;
  if (static_cast<ir::Op>(descriptor.op) == ir::Op::Broadcast) {
    text += " from rank " + std::to_string(descriptor.root);
  }
  return text + " (collective #" + std::to_string(descriptor.sequence) + ", recorded at " +
         descriptor.line + ")";
}

/// Why the ranks may not run this collective, the same text on every rank; "" when they agree.
std::string disagreement(const std::vector<Descriptor>& all) {
  for (size_t rank = 0; rank < all.size(); ++rank) {
    if (all[rank].failed) {
      return "rank " + std::to_string(rank) + " could not take part in " + describe(all[rank]) +
             ": " + all[rank].failure;
    }
  }
  const Descriptor& first = all.front();
  const bool agree = std::all_of(all.begin(), all.end(), [&](const Descriptor& other) {
    return other.sequence == first.sequence && other.op == first.op && other.root == first.root &&
           other.operand_hash == first.operand_hash;
  });
  if (agree) return "";
  std::string text = "the ranks reached different collectives:";
  for (size_t rank = 0; rank < all.size(); ++rank) {
    text += (rank ? "; rank " : " rank ") + std::to_string(rank) + " ran " + describe(all[rank]);
  }
  return text +
         ". Every rank must record the same collectives, of the same shapes, in the same order, "
         "and reach them through the same blocking points";
}

/// What one rank sends when the ranks join NCCL: rank 0's unique id, or why this rank cannot.
struct NcclJoining {
  int32_t failed = 0;
  cuda::NcclUniqueId id;
  char failure[256] = {};
};

/// Memory for collective `node`'s result: on the host for the host transport, or on its CUDA
/// device for NCCL, when `device_memory` gets the block.
BufferPtr allocate_result(const ir::Node& node, cuda::CudaMemory*& device_memory) {
  if (node.device.kind() != Device::Kind::Cuda) {
    return memory::Buffer::allocate(node.dtype, node.size());
  }
  auto memory = std::make_unique<cuda::CudaMemory>(
      cuda::cuda_device(node.device.index()), node.size() * dtype_size(node.dtype),
      cuda::kCollectiveStream, std::string(ir::op_name(node.op)));
  device_memory = memory.get();
  return memory::Buffer::on_device(node.dtype, node.size(), std::move(memory));
}

struct Job {
  ir::NodePtr node;
  BufferPtr input;
  std::exception_ptr input_error;
  BufferPtr result;  // the promise handed to the stream
  std::shared_ptr<memory::Event> written;
  LogLevel log_level = LogLevel::Off;
};

/// What this rank tells the others of collective `node` before it runs it.
Descriptor descriptor_of(const ir::Node& node, bool on_cuda) {
  Descriptor mine;
  mine.sequence = node.collective().sequence;
  mine.op = static_cast<int32_t>(node.op);
  mine.root = static_cast<int32_t>(node.collective().root);
  // A rank's CUDA tensor meets the others' through NCCL, a host tensor through the host
  // transport: the ranks must agree on which.
  const std::string operand =
      ir::type_text(node.inputs[0]->dtype, node.inputs[0]->shape) + (on_cuda ? " on cuda" : "");
  mine.operand_hash = std::hash<std::string>{}(operand);
  copy_text(mine.operand, sizeof mine.operand, operand);
  copy_text(mine.line, sizeof mine.line, line_of(node));
  return mine;
}

/// Allocates the result of `job`'s collective into `output` (and `output_memory`, for a CUDA
/// result); returns why this rank has no operand or result instead: its input's failure, or
/// running out of memory.
std::exception_ptr allocate_output(const Job& job, BufferPtr& output,
                                   cuda::CudaMemory*& output_memory) {
  const ir::Node& node = *job.node;
  std::exception_ptr failure = job.input_error;
  if (!failure) {
    try {
      output = allocate_result(node, output_memory);
    } catch (const std::bad_alloc&) {
      failure = std::make_exception_ptr(
          Error("out of memory for its result " + ir::type_text(node.dtype, node.shape)));
    } catch (const Error&) {  // the device's allocator, naming the op and the sizes
      failure = std::current_exception();
    }
  }
  return failure;
}

/// Counts `job`'s finished collective in lz::stats() and logs it under LZ_LOG: from `start` to
/// `agreed` the ranks agreed on it, from `agreed` to `moved` its data moved.
void report(const Job& job, const Communicator& communicator, bool on_cuda, Clock::time_point start,
            Clock::time_point agreed, Clock::time_point moved) {
  const ir::Node& node = *job.node;
  const auto microseconds = [](Clock::duration duration) {
    return std::chrono::duration_cast<std::chrono::microseconds>(duration).count();
  };
  support::Counters& counters = support::counters();
  counters.collectives.fetch_add(1, std::memory_order_relaxed);
  counters.collective_bytes.fetch_add(job.input->bytes(), std::memory_order_relaxed);
  counters.collective_wait_microseconds.fetch_add(microseconds(agreed - start),
                                                  std::memory_order_relaxed);
  counters.collective_move_microseconds.fetch_add(microseconds(moved - agreed),
                                                  std::memory_order_relaxed);
  if (job.log_level != LogLevel::Off) {
    const auto milliseconds = [](Clock::duration duration) {
      return std::chrono::duration<double, std::milli>(duration).count();
    };
    std::fprintf(stderr,
                 "[lazuli]   collective #%llu %s %s on %s rank %d/%d: wait=%.3fms move=%.3fms\n",
                 static_cast<unsigned long long>(node.collective().sequence),
                 std::string(ir::op_name(node.op)).c_str(),
                 ir::type_text(node.inputs[0]->dtype, node.inputs[0]->shape).c_str(),
                 on_cuda ? "NCCL" : communicator.name().c_str(), communicator.rank(),
                 communicator.size(), milliseconds(agreed - start), milliseconds(moved - agreed));
  }
}

/// The process group's communicator and the thread that runs its collectives.
class CollectiveQueue {
 public:
  static CollectiveQueue& instance() {
    static auto* queue = new CollectiveQueue();  // never destroyed: launches may run at exit
    return *queue;
  }

  void install(std::shared_ptr<Communicator> communicator, std::chrono::duration<double> timeout) {
    std::unique_lock lock(mutex_);
    if (communicator == nullptr) {
      drained_.wait(lock, [&] { return jobs_.empty() && !running_; });
      nccl_.reset();  // the worker is idle: nothing uses it
      nccl_host_.reset();
    }
    communicator_ = std::move(communicator);
    timeout_ = std::chrono::duration_cast<Clock::duration>(timeout);
    broken_.clear();
  }

  std::shared_ptr<Communicator> communicator() {
    std::lock_guard lock(mutex_);
    return communicator_;
  }

  void push(Job job) {
    std::lock_guard lock(mutex_);
    if (!worker_.joinable()) worker_ = std::thread([this] { work(); });
    jobs_.push_back(std::move(job));
    changed_.notify_one();
  }

 private:
  CollectiveQueue() = default;

  void work() {
    std::unique_lock lock(mutex_);
    for (;;) {
      changed_.wait(lock, [&] { return !jobs_.empty(); });
      Job job = std::move(jobs_.front());
      jobs_.pop_front();
      running_ = true;
      std::shared_ptr<Communicator> communicator = communicator_;
      const Clock::duration timeout = timeout_;
      std::string broken = broken_;
      lock.unlock();
      try {
        run(job, communicator, timeout, broken);
      } catch (...) {
        job.result->fail(std::current_exception());
      }
      job.written->set();
      lock.lock();
      if (!broken.empty() && broken_.empty() && communicator == communicator_) broken_ = broken;
      running_ = false;
      if (jobs_.empty()) drained_.notify_all();
    }
  }

  /// Runs one collective into job.result; throws its failure. Sets `broken` when it timed out
  /// (a collective left half done leaves the communicator unusable).
  void run(const Job& job, const std::shared_ptr<Communicator>& communicator,
           Clock::duration timeout, std::string& broken) {
    const ir::Node& node = *job.node;
    if (communicator == nullptr) {
      throw ir::recorded_error(node, "the process group is gone (lz::dist::finalize ran)");
    }
    if (!broken.empty()) throw ir::recorded_error(node, broken);
    support::trace::Span span("collective", ir::op_name(node.op));
    span.arg("sequence", static_cast<int64_t>(node.collective().sequence));
    span.arg("bytes", static_cast<int64_t>(node.inputs[0]->size()) * dtype_size(node.dtype));
    const auto start = Clock::now();

    const bool on_cuda = node.device.kind() == Device::Kind::Cuda;
    Descriptor mine = descriptor_of(node, on_cuda);
    BufferPtr output;
    cuda::CudaMemory* output_memory = nullptr;  // of a CUDA result
    if (std::exception_ptr failure = allocate_output(job, output, output_memory)) {
      mine.failed = 1;
      copy_text(mine.failure, sizeof mine.failure, what_of(failure));
    }

    const auto deadline = Clock::now() + timeout;
    const int ranks = communicator->size();
    // Kept alive by the communicator when a late rank may still write into it (a timeout).
    auto all = std::make_shared<std::vector<Descriptor>>(ranks + 1);
    all->back() = mine;
    const auto timed_out = [&](const char* stage) {
      const std::string what = "not every rank " + std::string(stage) + " within " +
                               seconds_text(timeout) + " (LZ_DIST_TIMEOUT)";
      broken = "an earlier collective, " + describe(mine) + ", timed out: " + what +
               ", so the process group cannot be used any more";
      return ir::recorded_error(
          node, what + ": a rank stopped, or did not record or evaluate this collective");
    };
    // Two spans inside the collective's: waiting for the ranks to agree, then moving data.
    std::optional<support::trace::Span> stage_span(std::in_place, "collective", "exchange");
    if (!communicator->all_gather_bytes(std::as_bytes(std::span(&all->back(), 1)),
                                        std::as_writable_bytes(std::span(*all).first(ranks)),
                                        deadline, all)) {
      throw timed_out("reached this collective");
    }
    stage_span.reset();
    const auto agreed = Clock::now();
    all->pop_back();
    if (const std::string reason = disagreement(*all); !reason.empty()) {
      // This rank's own failure keeps its own exception (an lz::Error naming its line).
      if (job.input_error) std::rethrow_exception(job.input_error);
      throw ir::recorded_error(node, reason);
    }
    stage_span.emplace("collective", "move");
    const auto owner = std::make_shared<std::pair<BufferPtr, BufferPtr>>(job.input, output);
    bool finished = false;
    if (!on_cuda) {
      finished = communicator->move(node, *job.input, *output, deadline, owner);
    } else {
      cuda::NcclCommunicator& nccl = nccl_for(node, communicator, deadline, timed_out, broken);
      try {
        finished = nccl.move(node, *job.input, *output_memory, deadline, owner);
      } catch (...) {
        // NCCL aborted its communicator, leaving the other ranks' part of this collective
        // unfinished: they fail it, or time out.
        broken = "an earlier collective, " + describe(mine) + ", failed (" +
                 what_of(std::current_exception()) +
                 "), so the process group cannot be used any more";
        throw;
      }
    }
    if (!finished) throw timed_out("finished moving the data");
    stage_span.reset();
    job.result->fulfil(std::move(output));
    report(job, *communicator, on_cuda, start, agreed, Clock::now());
  }

  /// This rank's NCCL communicator, joined at the first collective of CUDA tensors: every rank
  /// has agreed to run that collective, so every rank joins here, at the same point of its
  /// collectives. `host` carries rank 0's unique id to the others. A rank that cannot load NCCL
  /// says so in the same exchange, and every rank fails the collective, naming it; a failure to
  /// join makes the process group unusable (`broken`), as some ranks may have joined.
  template <class TimedOut>
  cuda::NcclCommunicator& nccl_for(const ir::Node& node, const std::shared_ptr<Communicator>& host,
                                   Communicator::Deadline deadline, const TimedOut& timed_out,
                                   std::string& broken) {
    if (nccl_ != nullptr && nccl_host_ == host) return *nccl_;
    NcclJoining mine;
    try {
      if (host->rank() == 0) {
        mine.id = cuda::make_nccl_unique_id(node);
      } else if (std::string why; !cuda::nccl_available(&why)) {
        throw Error("NCCL is not available: " + why);
      }
    } catch (const Error& error) {
      mine.failed = 1;
      copy_text(mine.failure, sizeof mine.failure, error.what());
    }
    const int ranks = host->size();
    auto all = std::make_shared<std::vector<NcclJoining>>(ranks + 1);
    all->back() = mine;
    if (!host->all_gather_bytes(std::as_bytes(std::span(&all->back(), 1)),
                                std::as_writable_bytes(std::span(*all).first(ranks)), deadline,
                                all)) {
      throw timed_out("joined NCCL");
    }
    for (int rank = 0; rank < ranks; ++rank) {
      if ((*all)[rank].failed) {
        throw ir::recorded_error(
            node, "rank " + std::to_string(rank) +
                      " cannot run collectives of CUDA tensors: " + (*all)[rank].failure);
      }
    }
    try {
      nccl_ = cuda::NcclCommunicator::join(cuda::cuda_device(node.device.index()), (*all)[0].id,
                                           host->rank(), ranks, node, deadline);
    } catch (const Error& error) {
      broken = std::string("NCCL could not start (") + error.what() +
               "), so the process group cannot be used any more";
      throw;
    }
    if (nccl_ == nullptr) throw timed_out("joined NCCL");
    nccl_host_ = host;
    return *nccl_;
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  std::condition_variable drained_;
  std::deque<Job> jobs_;
  bool running_ = false;
  std::thread worker_;
  std::shared_ptr<Communicator> communicator_;
  Clock::duration timeout_{};
  std::string broken_;  // why the communicator cannot be used; "" while it can
  // The worker's alone, but for install(), which destroys them while the worker is idle.
  std::unique_ptr<cuda::NcclCommunicator> nccl_;
  std::shared_ptr<Communicator> nccl_host_;  // the communicator nccl_ joined through
};

std::atomic<uint64_t> next_sequence{0};

}  // namespace

bool poll_until(const std::function<bool()>& done, Communicator::Deadline deadline) {
  const auto start = Clock::now();
  while (!done()) {
    const auto now = Clock::now();
    if (now > deadline) return false;
    if (now - start < std::chrono::seconds(1)) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  return true;
}

void keep_until_exit(std::shared_ptr<const void> owner) {
  static std::mutex mutex;
  static auto* kept = new std::vector<std::shared_ptr<const void>>();  // never destroyed
  std::lock_guard lock(mutex);
  kept->push_back(std::move(owner));
}

void install_communicator(std::shared_ptr<Communicator> communicator,
                          std::chrono::duration<double> timeout) {
  CollectiveQueue::instance().install(std::move(communicator), timeout);
}

std::shared_ptr<Communicator> installed_communicator() {
  return CollectiveQueue::instance().communicator();
}

uint64_t next_collective_sequence() {
  return next_sequence.fetch_add(1, std::memory_order_relaxed);
}

std::shared_ptr<memory::Buffer> queue_collective(ir::NodePtr node, BufferPtr input,
                                                 std::exception_ptr input_error,
                                                 LogLevel log_level) {
  auto written = std::make_shared<memory::Event>();
  BufferPtr result = memory::Buffer::promise(node->dtype, node->size(), written);
  CollectiveQueue::instance().push(
      {std::move(node), std::move(input), std::move(input_error), result, written, log_level});
  return result;
}

}  // namespace lz::runtime
