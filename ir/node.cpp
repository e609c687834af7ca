#include "ir/node.h"

#include <atomic>
#include <mutex>
#include <new>
#include <vector>

#include "ir/pending_list.h"
#include "lazuli/error.h"
#include "support/hot_path.h"

namespace lz::ir {
namespace {

// The inputs whose release an outer ~Node on this thread's stack has taken over, or null when no
// ~Node is running. A plain pointer (to a vector on that ~Node's stack) because a thread_local
// with a destructor would be gone before static tensors are destroyed at exit.
thread_local std::vector<NodePtr>* deferred_releases = nullptr;

// AddressSanitizer must see every node's memory freed, to report uses after free.
#if defined(__SANITIZE_ADDRESS__)
#define LAZULI_POOL_NODES 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LAZULI_POOL_NODES 0
#endif
#endif
#if !defined(LAZULI_POOL_NODES)
#define LAZULI_POOL_NODES 1
#endif

/// Batches of freed blocks that threads hand over: a node recorded on one thread is often freed
/// on another (a stream's worker drops the graph it ran), so a thread that frees more than it
/// makes passes its surplus to one that makes more than it frees. Bounded; never destroyed,
/// as nodes may be freed until the process exits.
class SharedBlocks {
 public:
  static constexpr size_t kBatch = 512;
  static constexpr size_t kMaxBatches = 64;  // 32,768 blocks, about 8 MiB

  static SharedBlocks& instance() {
    static auto* shared = new SharedBlocks();
    return *shared;
  }

  /// Whether give() would take a batch now (read without the lock: a hint).
  bool has_room() const { return count_.load(std::memory_order_relaxed) < kMaxBatches; }

  /// Takes `batch` (kBatch blocks) unless full; then `batch` is left as it was.
  bool give(std::vector<void*>& batch) {
    if (count_.load(std::memory_order_relaxed) >= kMaxBatches) return false;
    std::lock_guard lock(mutex_);
    if (batches_.size() >= kMaxBatches) return false;
    batches_.push_back(std::move(batch));
    batch.clear();
    count_.store(batches_.size(), std::memory_order_relaxed);
    return true;
  }

  /// A batch of blocks, or an empty vector. Without a lock when there is none, as a thread that
  /// records without freeing asks at every node.
  std::vector<void*> take() {
    if (count_.load(std::memory_order_relaxed) == 0) return {};
    std::lock_guard lock(mutex_);
    if (batches_.empty()) return {};
    std::vector<void*> batch = std::move(batches_.back());
    batches_.pop_back();
    count_.store(batches_.size(), std::memory_order_relaxed);
    return batch;
  }

 private:
  std::mutex mutex_;
  std::vector<std::vector<void*>> batches_;
  std::atomic<size_t> count_{0};  // batches_.size(), read without the lock
};

/// Freed blocks of one size (a node with its reference counts), kept for the next allocation on
/// this thread, with SharedBlocks behind: a thread keeps up to 4,096 (about 1 MiB) and trades
/// batches beyond that, so a loop that records, launches and frees graphs reuses its nodes
/// whichever thread frees them.
class FreeBlocks {
 public:
  static constexpr size_t kMaxBlocks = 4096;
  ~FreeBlocks() {
    for (void* block : blocks_) ::operator delete(block);
    destroyed_ = true;
  }
  /// Null when the list is gone (this thread is exiting) or empty, here and shared.
  static void* take() {
    if (destroyed_) return nullptr;
    std::vector<void*>& blocks = instance().blocks_;
    if (blocks.empty()) {
      std::vector<void*> batch = SharedBlocks::instance().take();
      if (batch.empty()) return nullptr;
      blocks.insert(blocks.end(), batch.begin(), batch.end());
    }
    void* block = blocks.back();
    blocks.pop_back();
    return block;
  }
  /// False when the block should go back to the system.
  static bool keep(void* block) {
    if (destroyed_) return false;
    std::vector<void*>& blocks = instance().blocks_;
    if (blocks.capacity() == 0) blocks.reserve(kMaxBlocks);
    if (blocks.size() >= kMaxBlocks) {
      // Both full (a long chain being freed): the block goes back to the system at once,
      // without copying a batch that would not be taken.
      if (!SharedBlocks::instance().has_room()) return false;
      std::vector<void*> batch(blocks.end() - SharedBlocks::kBatch, blocks.end());
      if (!SharedBlocks::instance().give(batch)) return false;
      blocks.resize(blocks.size() - SharedBlocks::kBatch);
    }
    blocks.push_back(block);
    return true;
  }

 private:
  static FreeBlocks& instance() {
    thread_local FreeBlocks blocks;
    return blocks;
  }
  std::vector<void*> blocks_;
  // Trivially destructible, so it can still be read after `blocks` is destroyed at thread exit.
  static thread_local bool destroyed_;
};
thread_local bool FreeBlocks::destroyed_ = false;

/// The allocator new_node gives allocate_shared: every allocation it sees is one block of the
/// same type (the node and its control block).
template <class T>
struct PooledAllocator {
  using value_type = T;
  PooledAllocator() = default;
  template <class U>
  PooledAllocator(const PooledAllocator<U>&) {}  // NOLINT(google-explicit-constructor)

  T* allocate(size_t count) {
    if (count == 1 && LAZULI_POOL_NODES) {
      if (void* block = FreeBlocks::take()) return static_cast<T*>(block);
    }
    return static_cast<T*>(::operator new(count * sizeof(T)));
  }
  void deallocate(T* block, size_t count) {
    if (count == 1 && LAZULI_POOL_NODES && FreeBlocks::keep(block)) return;
    ::operator delete(block);
  }
  template <class U>
  friend bool operator==(const PooledAllocator&, const PooledAllocator<U>&) {
    return true;
  }
};

}  // namespace

LZ_HOT_PATH NodePtr new_node() { return std::allocate_shared<Node>(PooledAllocator<Node>()); }

LZ_HOT_PATH Node::~Node() {
  if (pending) PendingList::global().remove(this);
  // Releasing inputs directly would recurse once per node of a chain and overflow the stack on
  // deep graphs. Instead nested ~Node calls park their inputs with the outermost one, which
  // releases them one at a time, so the depth never exceeds two destructors.
  if (deferred_releases != nullptr) {
    for (NodePtr& input : inputs) deferred_releases->push_back(std::move(input));
    return;
  }
  // Inputs that others still hold are released at once, in order, without the list (which
  // allocates); from the first this node frees on, the rest are parked and released one at a
  // time. In order, so that the second copy of an input read twice (y + y) sees a count of one
  // and is parked. A count read as above one that another thread drops meanwhile makes that
  // input's ~Node the outermost of its own, one level deeper: harmless.
  std::vector<NodePtr> parked;
  for (NodePtr& input : inputs) {
    if (parked.empty() && input.use_count() > 1) {
      input.reset();
    } else if (input != nullptr) {
      parked.push_back(std::move(input));
    }
  }
  if (parked.empty()) return;
  deferred_releases = &parked;
  while (!parked.empty()) {
    NodePtr last = std::move(parked.back());
    parked.pop_back();
    last.reset();
  }
  deferred_releases = nullptr;
}

void Node::become_data(std::shared_ptr<memory::Buffer> result) {
  buffer = std::move(result);
  was_computed = op != Op::Data;
  op = Op::Data;
  clear_attributes();
  const NodeInputs released = std::move(inputs);
  // `released` goes out of scope here; if it holds the last reference to a long chain, the
  // chain's ~Node calls drain it iteratively.
}

void Node::clear_attributes() {
  keepdims = false;
  params[0] = params[1] = ScalarParam{};
  seed = 0;
  attributes_.reset();
}

const NodeAttributes Node::kNoAttributes;

NodeAttributes& Node::set_attributes() {
  if (attributes_ == nullptr) attributes_ = std::make_unique<NodeAttributes>();
  return *attributes_;
}

Error recorded_error(const Node& node, const std::string& reason) {
  return Error("[" + std::string(op_name(node.op)) + "] recorded at " + node.location.file_name() +
                   ":" + std::to_string(node.location.line()) + ": " + reason,
               node.location);
}

}  // namespace lz::ir
