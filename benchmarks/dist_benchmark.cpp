// lz::dist against MPI called directly, side by side in one run, on the ranks of an mpirun:
//
//   mpirun -np 2 -x LZ_NUM_THREADS=1 build/release/benchmarks/dist_benchmark [--repeat N]
//
// 1. All-reduce of 64 MiB of float32: MPI_Allreduce on plain buffers (the baseline that
//    osu_allreduce measures) and MPI_Iallreduce + MPI_Wait (the non-blocking call lazuli makes,
//    whose algorithm Open MPI chooses apart), against lz::dist::all_reduce of a tensor, waited
//    for.
// 2. A data-parallel training step of the 784-1024-1024-10 MLP on a batch of 512 (512 / ranks
//    per rank), SGD: this rank alone (no communication), gradients averaged in buckets of 4 MiB,
//    and in one bucket after the whole backward pass. From a Chrome trace of the bucketed steps,
//    the share of the collectives' time during which a kernel ran on the stream: communication
//    hidden behind compute.
//
// Rank 0 prints the table. Times are the median of --repeat runs (default 10) after two warm-ups.
#include <mpi.h>
#include <sys/mman.h>

#include <lazuli/lazuli.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace {

using lz::Tensor;
using Clock = std::chrono::steady_clock;

int repeats = 10;

/// The median time in milliseconds of `run` over `repeats` runs after two warm-ups, every rank
/// starting each run together.
double median_ms(const std::function<void()>& run) {
  std::vector<double> times;
  for (int i = 0; i < repeats + 2; ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    const auto start = Clock::now();
    run();
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    if (i >= 2) times.push_back(ms);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

/// `count` floats in memory like a large lazuli buffer's: 2 MiB aligned, in huge pages where the
/// kernel gives them, touched once, so that MPI moves the same kind of memory in every row.
std::unique_ptr<float[], decltype(&std::free)> huge_page_floats(int64_t count, float value) {
  constexpr size_t kAlignment = size_t{2} << 20;
  const size_t bytes = (count * sizeof(float) + kAlignment - 1) / kAlignment * kAlignment;
  auto* data = static_cast<float*>(std::aligned_alloc(kAlignment, bytes));
  (void)::madvise(data, bytes, MADV_HUGEPAGE);
  std::fill(data, data + count, value);
  return {data, &std::free};
}

void all_reduce_table(int rank) {
  constexpr int64_t kCount = int64_t{16} << 20;  // 64 MiB of float32
  const auto send = huge_page_floats(kCount, 1.0f);
  const auto receive = huge_page_floats(kCount, 0.0f);
  const double direct = median_ms([&] {
    MPI_Allreduce(send.get(), receive.get(), static_cast<int>(kCount), MPI_FLOAT, MPI_SUM,
                  MPI_COMM_WORLD);
  });
  const double nonblocking = median_ms([&] {
    MPI_Request request;
    MPI_Iallreduce(send.get(), receive.get(), static_cast<int>(kCount), MPI_FLOAT, MPI_SUM,
                   MPI_COMM_WORLD, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
  });
  const Tensor x = lz::from_data(send.get(), {kCount});
  const double lazuli = median_ms([&] { lz::dist::all_reduce(x).wait_to_read(); });
  const double best_direct = std::min(direct, nonblocking);
  if (rank == 0) {
    const double mib = kCount * 4.0 / (1 << 20);
    std::printf("all-reduce of 64 MiB float32 on %d ranks (median ms, MiB/s of the operand)\n",
                lz::dist::world_size());
    std::printf("  %-40s %9.2f ms %9.0f MiB/s\n", "MPI_Allreduce", direct, mib / direct * 1000);
    std::printf("  %-40s %9.2f ms %9.0f MiB/s\n", "MPI_Iallreduce + MPI_Wait", nonblocking,
                mib / nonblocking * 1000);
    std::printf("  %-40s %9.2f ms %9.0f MiB/s  (%.0f%% of the faster MPI call's)\n",
                "lz::dist::all_reduce + wait_to_read", lazuli, mib / lazuli * 1000,
                100 * best_direct / lazuli);
  }
}

/// The 784-1024-1024-10 MLP's cross-entropy on a fixed random batch.
struct WideStep {
  Tensor images, labels;
  std::vector<Tensor> params;

  explicit WideStep(int64_t batch) {
    images = lz::random_uniform({batch, 784}, 7 + lz::dist::rank());
    labels = lz::astype(lz::random_uniform({batch}, 8 + lz::dist::rank(), 0, 10), lz::int64);
    params = lz::dist::broadcast_parameters(lz::nn::mlp_parameters({784, 1024, 1024, 10}, 3));
    lz::waitall();
  }

  lz::ScalarFunction loss() const {
    return [this](const std::vector<Tensor>& p) {
      return lz::cross_entropy(lz::nn::mlp(p, images), labels);
    };
  }
};

/// The share of the collectives' data movement (their "move" spans) in the trace at `path`
/// during which a kernel ran on the stream. (The wait for the other ranks to arrive, the
/// "exchange" span, is skew between the ranks, not communication.)
double hidden_share(const std::string& path) {
  struct Span {
    double begin, end;
  };
  std::vector<Span> collectives;
  std::vector<Span> kernels;
  std::ifstream file(path);
  for (std::string line; std::getline(file, line);) {
    const bool collective =
        line.find("\"cat\":\"collective\",\"name\":\"move\"") != std::string::npos;
    const bool kernel = line.find("\"cat\":\"kernel\"") != std::string::npos;
    const size_t ts = line.find("\"ts\":");
    const size_t dur = line.find("\"dur\":");
    if ((!collective && !kernel) || ts == std::string::npos || dur == std::string::npos) continue;
    const double begin = std::atof(line.c_str() + ts + 5);
    const Span span{begin, begin + std::atof(line.c_str() + dur + 6)};
    (collective ? collectives : kernels).push_back(span);
  }
  std::sort(kernels.begin(), kernels.end(),
            [](const Span& a, const Span& b) { return a.begin < b.begin; });
  double total = 0;
  double hidden = 0;
  for (const Span& c : collectives) {
    total += c.end - c.begin;
    double covered_until = c.begin;  // kernels run one at a time on the stream
    for (const Span& k : kernels) {
      if (k.end <= covered_until || k.begin >= c.end) continue;
      const double from = std::max(k.begin, covered_until);
      const double to = std::min(k.end, c.end);
      if (to > from) hidden += to - from;
      covered_until = std::max(covered_until, to);
    }
  }
  return total > 0 ? hidden / total : 0;
}

void training_step_table(int rank) {
  const int ranks = lz::dist::world_size();
  WideStep step(512 / ranks);
  const auto run = [&](const std::function<lz::ValueAndGrad(std::vector<Tensor>&)>& gradients) {
    std::vector<Tensor> params = step.params;
    lz::optim::SGD sgd({.learning_rate = 0.01});
    return median_ms([&] {
      auto [loss, grads] = gradients(params);
      sgd.step(params, grads);
      loss.item<float>();  // the per-minibatch barrier
    });
  };
  const double alone =
      run([&](std::vector<Tensor>& p) { return lz::value_and_grad(step.loss(), p); });
  const double one_bucket = run([&](std::vector<Tensor>& p) {
    return lz::dist::value_and_grad(step.loss(), p, std::numeric_limits<int64_t>::max());
  });
  const std::string trace = (std::filesystem::temp_directory_path() /
                             ("lazuli_dist_step." + std::to_string(rank) + ".json"))
                                .string();
  const auto bucketed_step = [&](std::vector<Tensor>& p) {
    return lz::dist::value_and_grad(step.loss(), p);
  };
  const double bucketed = run(bucketed_step);
  lz::start_trace(trace);
  run(bucketed_step);
  lz::stop_trace();
  const double hidden = hidden_share(trace);
  if (rank == 0) {
    std::printf("\ntraining step, MLP 784-1024-1024-10, batch 512 over %d ranks, SGD (median ms)\n",
                ranks);
    std::printf("  %-40s %9.2f ms\n", "this rank alone, no communication", alone);
    std::printf("  %-40s %9.2f ms\n", "averaged in one bucket after backward", one_bucket);
    std::printf("  %-40s %9.2f ms\n", "averaged in 4 MiB buckets", bucketed);
    std::printf("  data movement hidden behind kernels, from the trace (%s): %.0f%%\n",
                trace.c_str(), 100 * hidden);
    std::printf(
        "  communication time exposed: %.2f ms in one bucket, %.2f ms in buckets "
        "(%.0f%% hidden by bucketing)\n",
        one_bucket - alone, bucketed - alone,
        100 * (1 - (bucketed - alone) / (one_bucket - alone)));
  }
}

}  // namespace

int main(int argc, char** argv) try {
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::string(argv[i]) == "--repeat") repeats = std::max(1, std::atoi(argv[i + 1]));
  }
  lz::dist::init();
  const int rank = lz::dist::rank();
  all_reduce_table(rank);
  training_step_table(rank);
  lz::dist::finalize();
  return 0;
} catch (const lz::Error& error) {
  std::fprintf(stderr, "%s\n", error.what());
  return 1;
}
