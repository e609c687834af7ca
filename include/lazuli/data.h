// Minibatches for a training loop, prepared on a background thread while the loop computes
// (the prefetching input pipeline of the seed texts).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <source_location>
#include <vector>

#include "lazuli/tensor.h"

namespace lz::data {

/// Splits arrays of examples (inputs, labels, ...: each (N, ...), the same N) into minibatches
/// of their rows. A background thread gathers each batch's rows into new tensors, up to
/// `prefetch` batches ahead of the loop, and then waits: a loop slower than loading never makes
/// it hold more. The arrays are copied to host memory once, when the loader is made.
class DataLoader {
 public:
  struct Options {
    int64_t batch_size = 32;
    bool shuffle = true;  // a new order every epoch, drawn from seed and the epoch's number
    uint64_t seed = 0;
    bool drop_last = false;  // leave out the last batch when shorter (with shards: than them all)
    int64_t prefetch = 2;    // batches prepared ahead of the loop
    Device device = default_device();  // where the batches' tensors live
    // Data-parallel training: of every batch of batch_size * shards rows, in the epoch's order
    // (the same on every rank, from the same seed), this loader returns part `shard`, rows
    // shard * batch_size onwards (lz::dist::rank() and world_size() are the usual choice). The
    // last batch, when shorter, is split as evenly as possible (parts differ by one row at
    // most); when fewer rows than shards remain, that batch is left out on every shard, so all
    // shards take the same number of batches.
    int64_t shards = 1;
    int64_t shard = 0;
  };

  DataLoader(const std::vector<Tensor>& arrays, Options options,
             std::source_location loc = std::source_location::current());
  ~DataLoader();
  DataLoader(const DataLoader&) = delete;
  DataLoader& operator=(const DataLoader&) = delete;

  /// Rows in each array.
  int64_t size() const;
  /// Batches in an epoch.
  int64_t batches_per_epoch() const;

  /// Starts epoch `epoch` (its order when shuffling), dropping what is left of the current one.
  /// The first call to next() starts epoch 0.
  void start_epoch(int64_t epoch);
  /// The next batch of the epoch, one tensor per array (the rows in this epoch's order), or
  /// nothing once the epoch is over. Waits while the background thread prepares it; a failure
  /// there (memory) is thrown here.
  std::optional<std::vector<Tensor>> next();

 private:
  class Worker;
  std::unique_ptr<Worker> worker_;
};

}  // namespace lz::data
