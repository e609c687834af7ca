#include "runtime/onednn_gemm.h"

#include <dnnl.hpp>

#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

// libgomp's, which oneDNN's Debian build runs on; omp.h would need -fopenmp.
extern "C" void omp_set_num_threads(int num_threads);
extern "C" int omp_get_max_threads(void);

#if DNNL_VERSION_MAJOR != 2
#error \
    "lazuli's oneDNN matmul is written against oneDNN 2 (dnnl::matmul::desc); configure with -DLAZULI_WITH_ONEDNN=OFF"
#endif

namespace lz::runtime {
namespace {

constexpr int64_t kMinMultiplyAdds = int64_t{1} << 22;
constexpr int64_t kMinColumns = 16;
// Primitives kept for reuse. A program has a few product shapes; the bound only stops a program
// of ever-new shapes from keeping their generated code forever.
constexpr size_t kMaxCachedPrimitives = 256;

/// Everything a block's primitive depends on: its shape and how its operands lie in memory.
struct BlockLayout {
  int64_t m, k, n;
  int64_t a_leading, b_leading, out_leading;
  bool a_transposed, b_transposed;
  bool operator==(const BlockLayout&) const = default;
};

struct BlockLayoutHash {
  size_t operator()(const BlockLayout& layout) const {
    size_t hash = 0;
    for (const int64_t field :
         {layout.m, layout.k, layout.n, layout.a_leading, layout.b_leading, layout.out_leading,
          int64_t{layout.a_transposed}, int64_t{layout.b_transposed}}) {
      hash = hash * 1000003 ^ std::hash<int64_t>{}(field);
    }
    return hash;
  }
};

/// A block's primitive. Its scratch memory is the caller's (scratchpad_mode::user), so threads
/// may run one primitive at once: with oneDNN's default, a primitive's runs share one scratchpad.
struct Primitive {
  dnnl::memory::desc a, b, out, scratchpad;
  dnnl::matmul matmul;
};

// Never destroyed, like lazuli's other caches: a product still queued on a stream when the
// program exits runs after static objects are destroyed.
dnnl::engine& cpu_engine() {
  static dnnl::engine* const engine = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *engine;
}

/// oneDNN sizes its parallel regions by the calling thread's OpenMP thread count, when it creates
/// a primitive and when it runs one; at 1, both stay on the calling thread. The thread may be
/// the user's (a blocking point runs work itself), whose own OpenMP count is put back.
class SingleThreadedOpenMp {
 public:
  SingleThreadedOpenMp() : saved_(omp_get_max_threads()) {
    if (saved_ != 1) omp_set_num_threads(1);
  }
  ~SingleThreadedOpenMp() {
    if (saved_ != 1) omp_set_num_threads(saved_);
  }
  SingleThreadedOpenMp(const SingleThreadedOpenMp&) = delete;
  SingleThreadedOpenMp& operator=(const SingleThreadedOpenMp&) = delete;

 private:
  int saved_;
};

/// The matrices' memory descriptor: rows and columns `leading` elements apart, or, when
/// transposed, the other way round.
dnnl::memory::desc matrix_desc(int64_t rows, int64_t columns, int64_t leading, bool transposed) {
  const dnnl::memory::dims strides =
      transposed ? dnnl::memory::dims{1, leading} : dnnl::memory::dims{leading, 1};
  return dnnl::memory::desc({rows, columns}, dnnl::memory::data_type::f32, strides);
}

/// The primitive for `layout`, created at its first use; null for a layout oneDNN has no kernel
/// for, which is remembered too. Creating holds the cache's lock, so two threads never create
/// primitives at once: the blocks of one product would otherwise each compile the same kernel,
/// and oneDNN's own cache hands such racing threads one descriptor, whose reads ThreadSanitizer
/// reports unordered with its writes (oneDNN's synchronization is in uninstrumented code).
std::shared_ptr<const Primitive> primitive_for(const BlockLayout& layout) {
  static std::mutex* const mutex = new std::mutex;
  static auto* const cache =
      new std::unordered_map<BlockLayout, std::shared_ptr<const Primitive>, BlockLayoutHash>;
  std::lock_guard lock(*mutex);
  if (auto found = cache->find(layout); found != cache->end()) return found->second;
  if (cache->size() >= kMaxCachedPrimitives) cache->clear();
  const SingleThreadedOpenMp single_threaded;
  const dnnl::memory::desc a =
      matrix_desc(layout.m, layout.k, layout.a_leading, layout.a_transposed);
  const dnnl::memory::desc b =
      matrix_desc(layout.k, layout.n, layout.b_leading, layout.b_transposed);
  const dnnl::memory::desc out = matrix_desc(layout.m, layout.n, layout.out_leading, false);
  dnnl::primitive_attr attributes;
  attributes.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  std::shared_ptr<const Primitive> primitive;
  try {
    const dnnl::matmul::primitive_desc description(dnnl::matmul::desc(a, b, out), attributes,
                                                   cpu_engine());
    primitive = std::make_shared<const Primitive>(
        Primitive{a, b, out, description.scratchpad_desc(), dnnl::matmul(description)});
  } catch (const dnnl::error&) {
    // No kernel for this layout: the caller takes OpenBLAS's, now and next time.
  }
  return cache->try_emplace(layout, std::move(primitive)).first->second;
}

void run(const Primitive& primitive, const float* a, const float* b, float* out) {
  const SingleThreadedOpenMp single_threaded;
  thread_local dnnl::stream stream(cpu_engine());
  // Aligned to a page, as oneDNN's own scratchpads are.
  constexpr size_t kScratchAlignment = 4096;
  thread_local std::vector<std::byte> scratch;
  const size_t needed = primitive.scratchpad.get_size() + kScratchAlignment;
  if (scratch.size() < needed) scratch.resize(needed);
  void* aligned = scratch.data();
  size_t space = scratch.size();
  std::align(kScratchAlignment, primitive.scratchpad.get_size(), aligned, space);
  dnnl::engine& engine = cpu_engine();
  primitive.matmul.execute(
      stream, {{DNNL_ARG_SRC, dnnl::memory(primitive.a, engine, const_cast<float*>(a))},
               {DNNL_ARG_WEIGHTS, dnnl::memory(primitive.b, engine, const_cast<float*>(b))},
               {DNNL_ARG_DST, dnnl::memory(primitive.out, engine, out)},
               {DNNL_ARG_SCRATCHPAD, dnnl::memory(primitive.scratchpad, engine, aligned)}});
  stream.wait();  // a no-op for the OpenMP runtime's synchronous execution, but not promised
}

}  // namespace

bool onednn_takes(int64_t m, int64_t k, int64_t n) {
  return m * k * n >= kMinMultiplyAdds && n >= kMinColumns;
}

bool onednn_sgemm(GemmOperand<float> a, GemmOperand<float> b, float* out, int64_t out_leading,
                  int64_t m, int64_t k, int64_t n) {
  const std::shared_ptr<const Primitive> primitive =
      primitive_for({m, k, n, a.leading, b.leading, out_leading, a.transposed, b.transposed});
  if (primitive == nullptr) return false;
  run(*primitive, a.data, b.data, out);
  return true;
}

}  // namespace lz::runtime
