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
  int64_t epochs = 30;
  std::string data_dir = LAZULI_EXAMPLE_DATA_DIR;
  double min_test_accuracy = -1;  // below 0: no check
};

/// --epochs N, --data DIR, --min-test-accuracy A; nothing (having said why) for anything else.
inline std::optional<TrainingFlags> parse_training_flags(int argc, char** argv) {
  TrainingFlags flags;
  for (int i = 1; i < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag != "--epochs" && flag != "--data" && flag != "--min-test-accuracy") {
      std::fprintf(stderr, "unknown flag %s\n", argv[i]);
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
