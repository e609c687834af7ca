// DataLoader: a background thread gathers rows into batches, into a queue bounded by `prefetch`.
#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
#include <numeric>
#include <string>
#include <thread>
#include <utility>

#include "frontend/recording.h"
#include "lazuli/data.h"
#include "lazuli/error.h"

namespace lz::data {
namespace {

/// One array's rows in host memory.
struct HostArray {
  DType dtype = float32;
  Shape row_shape;
  size_t row_bytes = 0;
  std::vector<char> bytes;
};

template <Element T>
HostArray host_copy(const Tensor& array, std::source_location loc) {
  HostArray host;
  host.dtype = array.dtype();
  const Shape shape = array.shape();
  host.row_shape.assign(shape.begin() + 1, shape.end());
  host.row_bytes = static_cast<size_t>(shape_size(host.row_shape)) * sizeof(T);
  const std::span<const T> values = array.data<T>(loc);
  host.bytes.resize(values.size_bytes());
  if (!values.empty()) std::memcpy(host.bytes.data(), values.data(), values.size_bytes());
  return host;
}

template <Element T>
Tensor tensor_of(const std::vector<char>& bytes, Shape shape, Device device) {
  return from_data(reinterpret_cast<const T*>(bytes.data()), std::move(shape), Order::RowMajor,
                   device);
}

/// A permutation of 0..n-1 drawn from (seed, epoch) by Fisher-Yates over splitmix64, so that it is
/// the same on every platform.
std::vector<int64_t> shuffled(int64_t n, uint64_t seed, int64_t epoch) {
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(epoch);
  auto next = [&state] {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  };
  for (int64_t i = n - 1; i > 0; --i) {
    const auto bound = static_cast<uint64_t>(i + 1);
    const uint64_t limit = UINT64_MAX - UINT64_MAX % bound;  // rejection keeps it unbiased
    uint64_t draw = next();
    while (draw >= limit) draw = next();
    std::swap(order[static_cast<size_t>(i)], order[static_cast<size_t>(draw % bound)]);
  }
  return order;
}

}  // namespace

class DataLoader::Worker {
 public:
  Worker(std::vector<HostArray> arrays, int64_t rows, Options options)
      : arrays_(std::move(arrays)), rows_(rows), options_(options) {
    thread_ = std::thread([this] { run(); });
  }

  ~Worker() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    thread_.join();
  }

  int64_t rows() const { return rows_; }

  int64_t batches_per_epoch() const {
    const int64_t global_batch = options_.batch_size * options_.shards;
    const int64_t rest = rows_ % global_batch;
    const bool partial = rest != 0 && rest >= options_.shards && !options_.drop_last;
    return rows_ / global_batch + (partial ? 1 : 0);
  }

  void start_epoch(int64_t epoch) {
    std::lock_guard lock(mutex_);
    start_epoch_locked(epoch);
  }

  std::optional<std::vector<Tensor>> next() {
    std::unique_lock lock(mutex_);
    if (!started_) start_epoch_locked(0);
    if (taken_ == batches_per_epoch()) return std::nullopt;
    changed_.wait(lock, [&] { return !queue_.empty() || failure_; });
    if (failure_) std::rethrow_exception(failure_);
    std::vector<Tensor> batch = std::move(queue_.front());
    queue_.pop_front();
    ++taken_;
    changed_.notify_all();
    return batch;
  }

 private:
  void start_epoch_locked(int64_t epoch) {
    ++generation_;
    epoch_ = epoch;
    started_ = true;
    queue_.clear();
    taken_ = 0;
    changed_.notify_all();
  }

  void run() {
    std::unique_lock lock(mutex_);
    while (true) {
      changed_.wait(lock, [&] { return stopping_ || (started_ && !epoch_done_for(generation_)); });
      if (stopping_) return;
      const uint64_t generation = generation_;
      const int64_t epoch = epoch_;
      lock.unlock();  // next() and start_epoch() need not wait for the shuffle
      const std::vector<int64_t> order =
          options_.shuffle ? shuffled(rows_, options_.seed, epoch) : std::vector<int64_t>{};
      lock.lock();
      for (int64_t batch = 0; batch < batches_per_epoch(); ++batch) {
        changed_.wait(lock, [&] {
          return stopping_ || generation_ != generation ||
                 static_cast<int64_t>(queue_.size()) < options_.prefetch;
        });
        if (stopping_ || generation_ != generation) break;
        lock.unlock();
        std::vector<Tensor> prepared;
        std::exception_ptr failure;
        try {
          prepared = gather(order, batch);
        } catch (...) {
          failure = std::current_exception();
        }
        lock.lock();
        if (failure) {
          failure_ = failure;
          changed_.notify_all();
          return;
        }
        if (generation_ != generation) break;
        queue_.push_back(std::move(prepared));
        changed_.notify_all();
      }
      if (generation_ == generation) prepared_generation_ = generation;
    }
  }

  bool epoch_done_for(uint64_t generation) const { return prepared_generation_ == generation; }

  /// The rows of this shard's part of batch `batch`: positions first.. in the epoch's order.
  std::pair<int64_t, int64_t> first_and_count(int64_t batch) const {
    const int64_t global_first = batch * options_.batch_size * options_.shards;
    const int64_t global_count =
        std::min(options_.batch_size * options_.shards, rows_ - global_first);
    const int64_t part = global_count / options_.shards;
    const int64_t longer = global_count % options_.shards;  // the first parts take a row more
    return {global_first + options_.shard * part + std::min(options_.shard, longer),
            part + (options_.shard < longer ? 1 : 0)};
  }

  std::vector<Tensor> gather(const std::vector<int64_t>& order, int64_t batch) const {
    const auto [first, count] = first_and_count(batch);
    std::vector<Tensor> tensors;
    for (const HostArray& array : arrays_) {
      std::vector<char> bytes(static_cast<size_t>(count) * array.row_bytes);
      for (int64_t i = 0; i < count; ++i) {
        const auto row = static_cast<size_t>(options_.shuffle ? order[first + i] : first + i);
        std::memcpy(bytes.data() + i * array.row_bytes, array.bytes.data() + row * array.row_bytes,
                    array.row_bytes);
      }
      Shape shape{count};
      shape.insert(shape.end(), array.row_shape.begin(), array.row_shape.end());
      switch (array.dtype) {
        case float32: tensors.push_back(tensor_of<float>(bytes, shape, options_.device)); break;
        case float64: tensors.push_back(tensor_of<double>(bytes, shape, options_.device)); break;
        case int32: tensors.push_back(tensor_of<int32_t>(bytes, shape, options_.device)); break;
        case int64: tensors.push_back(tensor_of<int64_t>(bytes, shape, options_.device)); break;
        case bool_: tensors.push_back(tensor_of<bool>(bytes, shape, options_.device)); break;
      }
    }
    return tensors;
  }

  const std::vector<HostArray> arrays_;
  const int64_t rows_;
  const Options options_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::vector<Tensor>> queue_;
  uint64_t generation_ = 0;               // a new one per start_epoch
  uint64_t prepared_generation_ = ~0ull;  // the generation whose batches were all prepared
  int64_t epoch_ = 0;
  int64_t taken_ = 0;  // batches of this epoch next() returned
  bool started_ = false;
  bool stopping_ = false;
  std::exception_ptr failure_;
  std::thread thread_;
};

DataLoader::DataLoader(const std::vector<Tensor>& arrays, Options options,
                       std::source_location loc) try {
  if (arrays.empty()) throw Error("[DataLoader] needs at least one array");
  if (options.batch_size < 1 || options.prefetch < 1) {
    throw Error("[DataLoader] batch_size and prefetch must be >= 1, got " +
                std::to_string(options.batch_size) + " and " + std::to_string(options.prefetch));
  }
  if (options.shards < 1 || options.shard < 0 || options.shard >= options.shards) {
    throw Error("[DataLoader] shard " + std::to_string(options.shard) + " of " +
                std::to_string(options.shards) +
                " shards: shards must be >= 1 and shard in 0..shards - 1");
  }
  int64_t rows = -1;
  std::vector<HostArray> host;
  for (size_t i = 0; i < arrays.size(); ++i) {
    const ir::NodePtr& node = frontend::node_of(arrays[i], "DataLoader");
    if (node->shape.empty() || (rows >= 0 && node->shape[0] != rows)) {
      throw Error("[DataLoader] array " + std::to_string(i) + " has shape " +
                  shape_string(node->shape) +
                  "; every array needs a first axis of examples, the same length in all (" +
                  (rows >= 0 ? std::to_string(rows) : std::string("none yet")) + ")");
    }
    rows = node->shape[0];
    switch (node->dtype) {
      case float32: host.push_back(host_copy<float>(arrays[i], loc)); break;
      case float64: host.push_back(host_copy<double>(arrays[i], loc)); break;
      case int32: host.push_back(host_copy<int32_t>(arrays[i], loc)); break;
      case int64: host.push_back(host_copy<int64_t>(arrays[i], loc)); break;
      case bool_: host.push_back(host_copy<bool>(arrays[i], loc)); break;
    }
  }
  worker_ = std::make_unique<Worker>(std::move(host), rows, options);
} catch (const Error& error) {
  frontend::rethrow_at_user_line(error, loc);
}

DataLoader::~DataLoader() = default;

int64_t DataLoader::size() const { return worker_->rows(); }
int64_t DataLoader::batches_per_epoch() const { return worker_->batches_per_epoch(); }
void DataLoader::start_epoch(int64_t epoch) { worker_->start_epoch(epoch); }
std::optional<std::vector<Tensor>> DataLoader::next() { return worker_->next(); }

}  // namespace lz::data
