// The 8x8 handwritten digits of examples/data/, split for the training examples, and the flags
// those examples take.
#pragma once

#include <lazuli/lazuli.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

namespace examples {

struct DigitSplit {
  lz::Tensor train_images, train_labels, test_images, test_labels;
};

/// The images (pixels in [0, 1]) and labels in `dir`: every fifth image (360 of 1797) is for
/// testing, the others (1437) for training.
inline DigitSplit load_digits(const std::string& dir) {
  const lz::Tensor images = lz::load_npy(dir + "/digits_images.npy") / 16.0;
  const lz::Tensor labels = lz::load_npy(dir + "/digits_labels.npy");
  const int64_t n = labels.shape()[0];
  auto every_fifth = [&](const lz::Tensor& t, int64_t first) {
    return lz::slice(t, {first}, {n}, {5});
  };
  auto training = [&](const lz::Tensor& t) {
    return lz::concatenate(
        {every_fifth(t, 1), every_fifth(t, 2), every_fifth(t, 3), every_fifth(t, 4)});
  };
  return {training(images), training(labels), every_fifth(images, 0), every_fifth(labels, 0)};
}

struct TrainingFlags {
  int64_t epochs = 20;  // 98% test accuracy (README.md, docs/training.md)
  std::string data_dir = LAZULI_EXAMPLE_DATA_DIR;
  double min_test_accuracy = -1;  // below 0: no check
};

/// --epochs N, --data DIR, --min-test-accuracy A; nothing for --help (having printed the
/// usage) or anything else (having said why), setting the exit status the program ends with.
inline std::optional<TrainingFlags> parse_training_flags(int argc, char** argv, int& exit_status) {
  TrainingFlags flags;
  exit_status = 2;
  const auto usage = [&](std::FILE* out) {
    std::fprintf(
        out,
        "usage: %s [--epochs N] [--data DIR] [--min-test-accuracy A]\n"
        "  --epochs N             epochs to train (default %lld)\n"
        "  --data DIR             the digits data folder (default %s)\n"
        "  --min-test-accuracy A  exit with status 1 when the test accuracy ends below A\n",
        argv[0], static_cast<long long>(flags.epochs), flags.data_dir.c_str());
  };
  for (int i = 1; i < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      usage(stdout);
      exit_status = 0;
      return std::nullopt;
    }
    if (flag != "--epochs" && flag != "--data" && flag != "--min-test-accuracy") {
      std::fprintf(stderr, "unknown flag %s\n", argv[i]);
      usage(stderr);
      return std::nullopt;
    }
    if (i + 1 == argc) {
      std::fprintf(stderr, "%s needs a value\n", argv[i]);
      return std::nullopt;
    }
    if (flag == "--epochs") {
      flags.epochs = std::atoll(argv[i + 1]);
    } else if (flag == "--data") {
      flags.data_dir = argv[i + 1];
    } else {
      flags.min_test_accuracy = std::atof(argv[i + 1]);
    }
  }
  return flags;
}

}  // namespace examples
