// Trains a 64-128-10 MLP to classify 8x8 handwritten digits, the training loop the seed texts
// describe: a data loader prepares minibatches in the background while the loop records the
// forward pass, the gradient and the update; one blocking point per minibatch (loss.item())
// keeps the frontend from running too far ahead of the computation.
//
// Then it runs the seed's experiment: an epoch synchronizing once per minibatch, never inside
// the epoch, and after every op, each with its time and peak resident memory.
//
//   train_mlp [--epochs N] [--data DIR] [--min-test-accuracy A]
//
// With --min-test-accuracy it exits with status 1 when the test accuracy ends below A.
#include <lazuli/lazuli.h>

#include "digits.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

namespace {

using lz::Tensor;

constexpr int64_t kBatch = 64;

/// The peak resident memory since the last reset, in MiB (VmHWM in /proc/self/status).
double peak_resident_mib() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmHWM:", 0) == 0) return std::atof(line.c_str() + 6) / 1024;
  }
  return 0;
}

/// Starts a new peak-memory measurement (writing 5 to clear_refs resets VmHWM).
void reset_peak_resident() { std::ofstream("/proc/self/clear_refs") << "5"; }

enum class Sync { PerMinibatch, Never, PerOp };

struct Epoch {
  double mean_loss = 0;
  double seconds = 0;
  double peak_mib = 0;
  int64_t evaluations = 0;
};

/// One epoch of Adam steps over the loader's batches.
Epoch train_epoch(std::vector<Tensor>& params, lz::optim::Adam& adam, lz::data::DataLoader& loader,
                  int64_t epoch, Sync sync) {
  reset_peak_resident();
  lz::reset_stats();
  if (sync == Sync::PerOp) lz::set_engine(lz::Engine::Sync);
  const auto start = std::chrono::steady_clock::now();
  loader.start_epoch(epoch);
  double loss_sum = 0;
  Tensor pending_loss_sum = lz::zeros({});
  int64_t batches = 0;
  while (auto batch = loader.next()) {
    const Tensor& images = (*batch)[0];
    const Tensor& labels = (*batch)[1];
    auto [loss, grads] = lz::value_and_grad(
        [&](const std::vector<Tensor>& p) {
          return lz::cross_entropy(lz::nn::mlp(p, images), labels);
        },
        params);
    adam.step(params, grads);
    if (sync == Sync::Never) {
      pending_loss_sum = pending_loss_sum + loss;
    } else {
      loss_sum += loss.item<float>();  // the per-minibatch barrier
    }
    ++batches;
  }
  if (sync == Sync::Never) loss_sum = pending_loss_sum.item<float>();
  lz::waitall();
  Epoch result;
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (sync == Sync::PerOp) lz::set_engine(lz::Engine::Async);
  result.mean_loss = loss_sum / static_cast<double>(batches);
  result.peak_mib = peak_resident_mib();
  result.evaluations = lz::stats().evaluations;
  return result;
}

double accuracy(const std::vector<Tensor>& params, const Tensor& images, const Tensor& labels) {
  const Tensor predicted = lz::argmax(lz::nn::mlp(params, images), 1);
  return lz::mean(predicted == labels).item<float>();
}

}  // namespace

int main(int argc, char** argv) try {
  int exit_status = 0;
  const std::optional<examples::TrainingFlags> flags =
      examples::parse_training_flags(argc, argv, exit_status);
  if (!flags) return exit_status;
  const auto [epochs, data_dir, min_test_accuracy] = *flags;

  const examples::DigitSplit digits = examples::load_digits(data_dir);
  const int64_t train_images = digits.train_labels.shape()[0];
  lz::data::DataLoader loader({digits.train_images, digits.train_labels},
                              {.batch_size = kBatch, .shuffle = true, .seed = 1});
  std::vector<Tensor> params = lz::nn::mlp_parameters({64, 128, 10}, /*seed=*/42);
  lz::optim::Adam adam({.learning_rate = 3e-3});

  std::printf("digits: %lld training and %lld test images, MLP 64-128-10, Adam, batch %lld\n",
              static_cast<long long>(train_images),
              static_cast<long long>(digits.test_labels.shape()[0]),
              static_cast<long long>(kBatch));
  double test_accuracy = 0;
  for (int64_t epoch = 0; epoch < epochs; ++epoch) {
    const Epoch result = train_epoch(params, adam, loader, epoch, Sync::PerMinibatch);
    test_accuracy = accuracy(params, digits.test_images, digits.test_labels);
    std::printf("epoch %3lld  loss %.4f  test accuracy %5.1f%%  %8.0f images/s\n",
                static_cast<long long>(epoch + 1), result.mean_loss, 100 * test_accuracy,
                static_cast<double>(train_images) / result.seconds);
  }

  std::printf("\nthe seed's experiment: one more epoch each way, from the same parameters\n");
  std::printf("%-34s %10s %12s %12s\n", "synchronization", "ms/epoch", "peak RSS MiB",
              "evaluations");
  const struct {
    const char* name;
    Sync sync;
  } ways[] = {{"once per minibatch (loss.item())", Sync::PerMinibatch},
              {"never inside the epoch", Sync::Never},
              {"after every op (LZ_ENGINE=sync)", Sync::PerOp}};
  for (const auto& way : ways) {
    std::vector<Tensor> copy = params;
    lz::optim::Adam fresh({.learning_rate = 3e-3});
    train_epoch(copy, fresh, loader, epochs, way.sync);  // warm: compile this way's kernels
    copy = params;
    lz::optim::Adam timed({.learning_rate = 3e-3});
    const Epoch result = train_epoch(copy, timed, loader, epochs, way.sync);
    std::printf("%-34s %10.1f %12.1f %12lld\n", way.name, 1000 * result.seconds, result.peak_mib,
                static_cast<long long>(result.evaluations));
  }

  if (min_test_accuracy >= 0 && test_accuracy < min_test_accuracy) {
    std::fprintf(stderr, "test accuracy %.3f is below %.3f\n", test_accuracy, min_test_accuracy);
    return 1;
  }
  return 0;
} catch (const lz::Error& error) {
  std::fprintf(stderr, "%s\n", error.what());
  return 1;
}
