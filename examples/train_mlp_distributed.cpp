// Trains the digits MLP of train_mlp.cpp data-parallel across the ranks of an mpirun:
//
//   mpirun -np 2 build/release/examples/train_mlp_distributed [--epochs N] [--min-test-accuracy A]
//
// Every rank starts from rank 0's parameters (broadcast), takes its shard of each batch of 64
// images (the data loader's shard options), and applies the gradients averaged over the ranks
// (lz::dist::value_and_grad, in buckets): all ranks take the steps one process takes on the
// whole batches. The loss and the test accuracy are averaged across the ranks, each rank scoring
// its part of the test images. Rank 0 prints a line per epoch, then the time of an epoch against
// one process (rank 0 alone, the other ranks waiting at a barrier). Each rank computes on
// lz::dist::device(): its GPU where there are GPUs, else the CPU.
//
// With --min-test-accuracy it exits with status 1 when the test accuracy ends below A.
#include <lazuli/lazuli.h>

#include "digits.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

namespace {

using lz::Tensor;
using lz::dist::ReduceOp;

constexpr int64_t kBatch = 64;  // images per step, over all ranks
constexpr double kLearningRate = 3e-3;

Tensor loss_of(const std::vector<Tensor>& params, const Tensor& images, const Tensor& labels) {
  return lz::cross_entropy(lz::nn::mlp(params, images), labels);
}

/// One epoch of Adam steps over the loader's batches; returns the epoch's mean loss on this
/// rank. `distributed`: gradients averaged over the ranks; else this process alone.
double train_epoch(std::vector<Tensor>& params, lz::optim::Adam& adam, lz::data::DataLoader& loader,
                   int64_t epoch, bool distributed) {
  loader.start_epoch(epoch);
  double loss_sum = 0;
  int64_t batches = 0;
  while (auto batch = loader.next()) {
    const Tensor& images = (*batch)[0];
    const Tensor& labels = (*batch)[1];
    const auto f = [&](const std::vector<Tensor>& p) { return loss_of(p, images, labels); };
    auto [loss, grads] =
        distributed ? lz::dist::value_and_grad(f, params) : lz::value_and_grad(f, params);
    adam.step(params, grads);
    loss_sum += loss.item<float>();  // the per-minibatch barrier
    ++batches;
  }
  return loss_sum / static_cast<double>(batches);
}

/// The fraction of the test images classified right: each rank scores its part of them and
/// the counts are summed across the ranks.
double test_accuracy(const std::vector<Tensor>& params, const examples::DigitSplit& digits) {
  const int64_t n = digits.test_labels.shape()[0];
  const int64_t first = n * lz::dist::rank() / lz::dist::world_size();
  const int64_t last = n * (lz::dist::rank() + 1) / lz::dist::world_size();
  const Tensor images = lz::slice(digits.test_images, {first}, {last});
  const Tensor labels = lz::slice(digits.test_labels, {first}, {last});
  const Tensor right =
      lz::sum(lz::astype(lz::argmax(lz::nn::mlp(params, images), 1) == labels, lz::float32));
  return lz::dist::all_reduce(right).item<float>() / static_cast<double>(n);
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// The median, in milliseconds, of epoch times in seconds: robust to the epochs that compile
/// kernels (the first, and the first with a short last batch).
double median_ms(std::vector<double> seconds) {
  std::sort(seconds.begin(), seconds.end());
  return 1000 * seconds[seconds.size() / 2];
}

}  // namespace

int main(int argc, char** argv) try {
  int exit_status = 0;
  const std::optional<examples::TrainingFlags> flags =
      examples::parse_training_flags(argc, argv, exit_status);
  if (!flags) return exit_status;
  const auto [epochs, data_dir, min_test_accuracy] = *flags;

  lz::dist::init();
  // Each rank computes on its own device: its GPU when the machine has GPUs (NCCL moves the
  // collectives), else the CPU (MPI moves them).
  lz::set_default_device(lz::dist::device());
  const int rank = lz::dist::rank();
  const int ranks = lz::dist::world_size();
  if (kBatch % ranks != 0) {
    std::fprintf(stderr, "%d ranks do not split a batch of %lld evenly\n", ranks,
                 static_cast<long long>(kBatch));
    return 2;
  }
  const examples::DigitSplit digits = examples::load_digits(data_dir);
  const int64_t train_images = digits.train_labels.shape()[0];
  lz::data::DataLoader loader(
      {digits.train_images, digits.train_labels},
      {.batch_size = kBatch / ranks, .seed = 1, .shards = ranks, .shard = rank});
  const std::vector<Tensor> initial =
      lz::dist::broadcast_parameters(lz::nn::mlp_parameters({64, 128, 10}, /*seed=*/42));
  std::vector<Tensor> params = initial;
  lz::optim::Adam adam({.learning_rate = kLearningRate});

  if (rank == 0) {
    std::printf(
        "digits on %d ranks (rank 0 on %s): %lld training and %lld test images, MLP 64-128-10, "
        "Adam, batch %lld (%lld per rank)\n",
        ranks, lz::default_device().name().c_str(), static_cast<long long>(train_images),
        static_cast<long long>(digits.test_labels.shape()[0]), static_cast<long long>(kBatch),
        static_cast<long long>(kBatch / ranks));
  }
  double accuracy = 0;
  std::vector<double> epoch_seconds;
  for (int64_t epoch = 0; epoch < epochs; ++epoch) {
    const auto start = std::chrono::steady_clock::now();
    const double local_loss = train_epoch(params, adam, loader, epoch, /*distributed=*/true);
    const double seconds = seconds_since(start);
    epoch_seconds.push_back(seconds);
    const double loss =
        lz::dist::all_reduce(lz::full({}, local_loss, lz::float64), ReduceOp::Mean).item<double>();
    accuracy = test_accuracy(params, digits);
    if (rank == 0) {
      std::printf("epoch %3lld  loss %.4f  test accuracy %5.1f%%  %8.0f images/s\n",
                  static_cast<long long>(epoch + 1), loss, 100 * accuracy,
                  static_cast<double>(train_images) / seconds);
    }
  }

  // One process on the whole batches, from the same start: rank 0 alone, timed over the same
  // number of epochs, while the other ranks wait.
  {
    if (rank == 0) {
      lz::data::DataLoader whole({digits.train_images, digits.train_labels},
                                 {.batch_size = kBatch, .seed = 1});
      std::vector<Tensor> alone = initial;
      lz::optim::Adam alone_adam({.learning_rate = kLearningRate});
      std::vector<double> alone_seconds;
      for (int64_t epoch = 0; epoch < epochs; ++epoch) {
        const auto start = std::chrono::steady_clock::now();
        train_epoch(alone, alone_adam, whole, epoch, /*distributed=*/false);
        alone_seconds.push_back(seconds_since(start));
      }
      const double per_epoch = median_ms(epoch_seconds);
      const double alone_per_epoch = median_ms(alone_seconds);
      std::printf("\nmedian epoch: %d ranks %.1f ms, one process %.1f ms (%.2fx the speed)\n",
                  ranks, per_epoch, alone_per_epoch, alone_per_epoch / per_epoch);
    }
    lz::dist::barrier();
  }

  const bool below = min_test_accuracy >= 0 && accuracy < min_test_accuracy;
  if (below && rank == 0) {
    std::fprintf(stderr, "test accuracy %.3f is below %.3f\n", accuracy, min_test_accuracy);
  }
  lz::dist::finalize();
  return below ? 1 : 0;
} catch (const lz::Error& error) {
  std::fprintf(stderr, "%s\n", error.what());
  return 1;
}
