#include "runtime/cpu/onednn_gemm.h"

#include <dnnl.hpp>

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include "runtime/devices.h"

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

/// Everything a block's primitive depends on: its shape, how its operands lie in memory, and
/// whether it reads b packed (onednn_sgemm's product).
struct BlockLayout {
  int64_t m, k, n;
  int64_t a_leading, b_leading, out_leading;
  bool a_transposed, b_transposed, packs_b;
  bool operator==(const BlockLayout&) const = default;
};

struct BlockLayoutHash {
  size_t operator()(const BlockLayout& layout) const {
    size_t hash = 0;
    for (const int64_t field :
         {layout.m, layout.k, layout.n, layout.a_leading, layout.b_leading, layout.out_leading,
          int64_t{layout.a_transposed}, int64_t{layout.b_transposed}, int64_t{layout.packs_b}}) {
      hash = hash * 1000003 ^ std::hash<int64_t>{}(field);
    }
    return hash;
  }
};

/// A block's primitive, which reads `b` as stored, or packed: in the blocked layout oneDNN chose
/// for it (packed_b), which `pack` puts it in. Their scratch memory is the caller's
/// (scratchpad_mode::user), so threads may run one primitive at once: with oneDNN's default, a
/// primitive's runs share one scratchpad.
struct Primitive {
  dnnl::memory::desc a, b, packed_b, out, scratchpad, pack_scratchpad;
  dnnl::matmul matmul;
  std::optional<dnnl::reorder> pack;         // none: b is read as stored (packed_b == b)
  mutable std::atomic<bool> has_run{false};  // reregister_exit_drain after the first run
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
  const dnnl::memory::desc any_b({layout.k, layout.n}, dnnl::memory::data_type::f32,
                                 dnnl::memory::format_tag::any);
  std::shared_ptr<const Primitive> primitive;
  try {
    const dnnl::matmul::primitive_desc description(
        dnnl::matmul::desc(a, layout.packs_b ? any_b : b, out), attributes, cpu_engine());
    auto made = std::make_shared<Primitive>();
    made->a = a;
    made->b = b;
    made->packed_b = description.weights_desc();
    made->out = out;
    made->scratchpad = description.scratchpad_desc();
    made->matmul = dnnl::matmul(description);
    if (layout.packs_b) {
      const dnnl::reorder::primitive_desc packing(cpu_engine(), b, cpu_engine(), made->packed_b,
                                                  attributes);
      made->pack_scratchpad = packing.scratchpad_desc();
      made->pack = dnnl::reorder(packing);
    }
    primitive = std::move(made);
  } catch (const dnnl::error&) {
    // No kernel for this layout: the caller takes OpenBLAS's, now and next time.
  }
  return cache->try_emplace(layout, std::move(primitive)).first->second;
}

/// `bytes` of `storage` aligned to a page, as oneDNN's own scratchpads are; grows it as needed.
void* page_aligned(std::vector<std::byte>& storage, size_t bytes) {
  constexpr size_t kAlignment = 4096;
  if (storage.size() < bytes + kAlignment) storage.resize(bytes + kAlignment);
  void* aligned = storage.data();
  size_t space = storage.size();
  return std::align(kAlignment, bytes, aligned, space);
}

/// b of `product` in primitive's packed layout (primitive.pack): packed at the thread's first
/// block of the product reading it (a product split by columns has a b per block), then kept for
/// its next ones. The memory stays with the thread for the next product.
void* packed_b(const Primitive& primitive, uint64_t product, const float* b, dnnl::stream& stream) {
  thread_local struct {
    uint64_t product = 0;
    const float* b = nullptr;
    dnnl::memory::desc layout;
    std::vector<std::byte> storage;
    void* data = nullptr;
  } packed;
  if (packed.product == product && packed.b == b && packed.layout == primitive.packed_b) {
    return packed.data;
  }
  packed.data = page_aligned(packed.storage, primitive.packed_b.get_size());
  thread_local std::vector<std::byte> scratch;
  dnnl::engine& engine = cpu_engine();
  primitive.pack->execute(
      stream, {{DNNL_ARG_FROM, dnnl::memory(primitive.b, engine, const_cast<float*>(b))},
               {DNNL_ARG_TO, dnnl::memory(primitive.packed_b, engine, packed.data)},
               {DNNL_ARG_SCRATCHPAD,
                dnnl::memory(primitive.pack_scratchpad, engine,
                             page_aligned(scratch, primitive.pack_scratchpad.get_size()))}});
  packed.product = product;
  packed.b = b;
  packed.layout = primitive.packed_b;
  return packed.data;
}

void run(const Primitive& primitive, uint64_t product, const float* a, const float* b, float* out) {
  const SingleThreadedOpenMp single_threaded;
  thread_local dnnl::stream stream(cpu_engine());
  thread_local std::vector<std::byte> scratch;
  dnnl::engine& engine = cpu_engine();
  primitive.matmul.execute(
      stream,
      {{DNNL_ARG_SRC, dnnl::memory(primitive.a, engine, const_cast<float*>(a))},
       {DNNL_ARG_WEIGHTS, dnnl::memory(primitive.packed_b, engine,
                                       primitive.pack ? packed_b(primitive, product, b, stream)
                                                      : const_cast<float*>(b))},
       {DNNL_ARG_DST, dnnl::memory(primitive.out, engine, out)},
       {DNNL_ARG_SCRATCHPAD,
        dnnl::memory(primitive.scratchpad, engine,
                     page_aligned(scratch, primitive.scratchpad.get_size()))}});
  stream.wait();  // a no-op for the OpenMP runtime's synchronous execution, but not promised
}

}  // namespace

void load_onednn() {
  static std::once_flag loaded;
  std::call_once(loaded, [] {
    constexpr int64_t kSide = 32;
    const std::vector<float> a(kSide * kSide, 1.0f);
    const std::vector<float> b(kSide * kSide, 1.0f);
    std::vector<float> out(kSide * kSide);
    for (const bool packs_b : {false, true}) {
      const std::shared_ptr<const Primitive> primitive =
          primitive_for({kSide, kSide, kSide, kSide, kSide, kSide, false, false, packs_b});
      if (primitive != nullptr) {
        run(*primitive, packs_b ? new_onednn_product() : 0, a.data(), b.data(), out.data());
      }
    }
    reregister_exit_drain();
  });
}

bool onednn_takes(int64_t m, int64_t k, int64_t n) {
  return m * k * n >= kMinMultiplyAdds && n >= kMinColumns;
}

uint64_t new_onednn_product() {
  static std::atomic<uint64_t> last{0};
  return last.fetch_add(1, std::memory_order_relaxed) + 1;
}

bool onednn_sgemm(uint64_t product, GemmOperand<float> a, GemmOperand<float> b, float* out,
                  int64_t out_leading, int64_t m, int64_t k, int64_t n) {
  const std::shared_ptr<const Primitive> primitive = primitive_for(
      {m, k, n, a.leading, b.leading, out_leading, a.transposed, b.transposed, product != 0});
  if (primitive == nullptr) return false;
  run(*primitive, product, a.data, b.data, out);
  // After what this run made that load_onednn's did not (another instruction set's kernels).
  // Read first: every block of every product gets here, and an exchange would write the line.
  if (!primitive->has_run.load(std::memory_order_relaxed) && !primitive->has_run.exchange(true)) {
    reregister_exit_drain();
  }
  return true;
}

}  // namespace lz::runtime
