// Recording an op allocates nothing in the common case: node memory comes from a per-thread
// pool, inputs and shapes of up to four dimensions live in the node, and a number operand is a
// constant shared by the ops that read it. This executable counts every operator new.
#include <gtest/gtest.h>

#include <cstdlib>
#include <new>

#include <lazuli/lazuli.h>

#include "frontend/settings.h"

namespace {

thread_local int64_t allocations = 0;

}  // namespace

void* operator new(size_t size) {
  ++allocations;
  if (void* block = std::malloc(size == 0 ? 1 : size)) return block;
  throw std::bad_alloc();
}
void operator delete(void* block) noexcept { std::free(block); }
void operator delete(void* block, size_t /*size*/) noexcept { std::free(block); }

namespace lz {
namespace {

/// The operator new calls on this thread while `record` runs.
template <class Record>
int64_t allocations_during(Record record) {
  const int64_t before = allocations;
  record();
  return allocations - before;
}

bool nodes_are_pooled() {
#if defined(__SANITIZE_ADDRESS__)
  return false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  return false;
#endif
#endif
  return true;
}

TEST(RecordingAllocationTest, ElementwiseOpsOfUpToFourDimensionsAllocateNothing) {
  if (!nodes_are_pooled()) {
    GTEST_SKIP() << "under AddressSanitizer every node is allocated on its own, so that a use "
                    "after free names the stack that freed it";
  }
  // Nothing launches while recording, whatever the environment asks for.
  struct RecordingOnly {
    Engine engine = frontend::engine();
    int64_t budget = frontend::max_pending_nodes();
    RecordingOnly() {
      set_engine(Engine::Async);
      set_max_pending_nodes(0);
    }
    ~RecordingOnly() {
      set_engine(engine);
      set_max_pending_nodes(budget);
    }
  } recording_only;
  for (const Shape& shape : {Shape{}, Shape{1000}, Shape{8, 16}, Shape{2, 3, 4, 5}}) {
    const Tensor x = ones(shape);
    const Tensor y = full(shape, 2.0);
    const auto record_loop = [&] {
      Tensor z = x;
      for (int i = 0; i < 100; ++i) {
        z = z + 1;
        z = z * y;
        z = exp(z) - x;
        z = where(z > y, z, y * 0.5);
      }
      return z;
    };
    record_loop();  // the pool and the shared constants fill once
    Tensor kept;
    EXPECT_EQ(allocations_during([&] { kept = record_loop(); }), 0) << shape_string(shape);
    EXPECT_EQ(kept.shape(), shape);
  }
}

}  // namespace
}  // namespace lz
