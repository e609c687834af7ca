#include "runtime/cpu/blas_matmul.h"

#include <cblas.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "ir/matmul_shape.h"
#include "reference/interpreter_internal.h"
#include "runtime/cpu/narrow_gemm.h"
#include "runtime/cpu/onednn_gemm.h"
#include "runtime/thread_pool.h"

// OpenBLAS's own cblas.h declares this, but on Debian <cblas.h> is an alternative that may be
// netlib's header; the library linked is OpenBLAS either way (see the top-level CMakeLists.txt).
extern "C" void openblas_set_num_threads(int num_threads);

namespace lz::runtime {
namespace {

// cblas takes M, N, K and leading dimensions as `int` (blasint in an LP64 OpenBLAS build).
constexpr int64_t kMaxBlasDimension = std::numeric_limits<int>::max();

// Products of fewer multiply-adds run on the calling thread: splitting one costs a hand-off to
// the pool, more than a few microseconds of arithmetic saves.
constexpr int64_t kMinSplitMultiplyAdds = int64_t{1} << 20;
// Rows (or columns) per thread are a multiple of this, so that a product splits into at most two
// sizes of block (a oneDNN primitive each).
constexpr int64_t kBlockGranule = 16;
// Rows per thread from which oneDNN packs b once per product and thread (onednn_sgemm): the
// mlp's 65,536 gained a tenth, the wide model's 256 lost as much (its b is 3 MiB, packed before
// any row is multiplied rather than panel by panel as oneDNN's kernels do).
constexpr int64_t kMinRowsToPackB = 4096;

/// Keeps OpenBLAS to the calling thread: lazuli's pool splits products itself.
void keep_blas_single_threaded() {
  static const bool set = (openblas_set_num_threads(1), true);
  static_cast<void>(set);
}

CBLAS_TRANSPOSE transpose_flag(bool transposed) { return transposed ? CblasTrans : CblasNoTrans; }

/// out [m, n] (rows `out_leading` apart) = a [m, k] @ b [k, n] on the calling thread: lazuli's
/// own kernel for narrow products (narrow_gemm.h), oneDNN's when it takes the product
/// (onednn_takes) and has a kernel for the layout, else OpenBLAS's.
void gemm_block(uint64_t product, GemmOperand<float> a, GemmOperand<float> b, float* out,
                int64_t out_leading, int64_t m, int64_t k, int64_t n) {
  if (narrow_gemm_takes(a, b, k, n)) return narrow_sgemm(a, b, out, out_leading, m, k, n);
  if (onednn_takes(m, k, n) && onednn_sgemm(product, a, b, out, out_leading, m, k, n)) return;
  cblas_sgemm(CblasRowMajor, transpose_flag(a.transposed), transpose_flag(b.transposed),
              static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), 1.0f, a.data,
              static_cast<int>(a.leading), b.data, static_cast<int>(b.leading), 0.0f, out,
              static_cast<int>(out_leading));
}

void gemm_block(uint64_t, GemmOperand<double> a, GemmOperand<double> b, double* out,
                int64_t out_leading, int64_t m, int64_t k, int64_t n) {
  cblas_dgemm(CblasRowMajor, transpose_flag(a.transposed), transpose_flag(b.transposed),
              static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), 1.0, a.data,
              static_cast<int>(a.leading), b.data, static_cast<int>(b.leading), 0.0, out,
              static_cast<int>(out_leading));
}

/// Rows [start, ...) of `a`: row `start` of a transposed a is column `start` of the [k, m]
/// matrix stored.
template <class T>
GemmOperand<T> rows_from(GemmOperand<T> a, int64_t start) {
  return {a.data + (a.transposed ? start : start * a.leading), a.transposed, a.leading};
}

/// Where a product's rows go: into `out` (rows n apart, row 0 first), or, with an epilogue, in
/// blocks of rows through it, written to `out` first where it is set and else to memory of the
/// thread's own.
template <class T>
struct RowSink {
  T* out;
  const RowEpilogue* epilogue;  // null: the rows only go to `out`
  int64_t first_row;            // the product's row that is row 0 here, for the epilogue
};

// Blocks of kBlockGranule rows wider than this would not stay in cache: blas_matmul with an
// epilogue refuses such products.
constexpr int64_t kMaxEpilogueBlockBytes = int64_t{4} << 20;

int64_t epilogue_block_rows(int64_t n, int64_t element_bytes) {
  return std::max(kBlockGranule,
                  epilogue_block_bytes() / (n * element_bytes) / kBlockGranule * kBlockGranule);
}

/// The calling thread's memory for a block of rows that no buffer keeps.
template <class T>
T* thread_block_memory(int64_t elements) {
  thread_local std::vector<T> memory;
  if (static_cast<int64_t>(memory.size()) < elements) memory.resize(elements);
  return memory.data();
}

/// Rows [start, start + length) of a [m, k] @ b [k, n] into `sink`, which has an epilogue, a
/// block of epilogue_block_rows at a time.
template <class T>
void rows_through_epilogue(uint64_t product, GemmOperand<T> a, GemmOperand<T> b,
                           const RowSink<T>& sink, int64_t start, int64_t length, int64_t k,
                           int64_t n) {
  const int64_t block_rows = std::min(length, epilogue_block_rows(n, sizeof(T)));
  T* const own = sink.out == nullptr ? thread_block_memory<T>(block_rows * n) : nullptr;
  for (int64_t row = start; row < start + length; row += block_rows) {
    const int64_t rows = std::min(block_rows, start + length - row);
    T* const destination = sink.out == nullptr ? own : sink.out + row * n;
    gemm_block(product, rows_from(a, row), b, destination, n, rows, k, n);
    (*sink.epilogue)(destination, sink.first_row + row, rows);
  }
}

/// `sink` = a [m, k] @ b [k, n], with m, k and n at most kMaxBlasDimension, split into a block
/// per thread: of rows, whose elements of `a` lie together, or of columns when `a` is stored
/// transposed (its rows would be strided: oneDNN ran such blocks at half speed), unless the other
/// dimension has more blocks to give (a matrix times a vector, a narrow transposed product). An
/// epilogue takes rows, so with one the blocks are rows. Each block is single-threaded calls
/// (gemm_block), through oneDNN where it takes the block.
template <class T>
void gemm(GemmOperand<T> a, GemmOperand<T> b, const RowSink<T>& sink, int64_t m, int64_t k,
          int64_t n) {
  const int64_t threads = m * k * n >= kMinSplitMultiplyAdds ? thread_count() : 1;
  // Rows enough per thread for oneDNN to pack b once for them all (onednn_sgemm).
  const uint64_t product = m / threads >= kMinRowsToPackB ? new_onednn_product() : 0;
  const auto granules = [](int64_t extent) { return (extent + kBlockGranule - 1) / kBlockGranule; };
  const bool preferred_rows = !a.transposed;
  const int64_t preferred = granules(preferred_rows ? m : n);
  const int64_t other = granules(preferred_rows ? n : m);
  const bool split_rows =
      sink.epilogue != nullptr ||
      (preferred >= threads || preferred >= other ? preferred_rows : !preferred_rows);
  const int64_t extent = split_rows ? m : n;
  const int64_t block_extent =
      std::min(extent, (granules(extent) + threads - 1) / threads * kBlockGranule);
  const int64_t blocks = (extent + block_extent - 1) / block_extent;
  const auto run_block = [&](int64_t block) {
    const int64_t start = block * block_extent;
    const int64_t length = std::min(block_extent, extent - start);
    if (sink.epilogue != nullptr) {
      rows_through_epilogue(product, a, b, sink, start, length, k, n);
    } else if (split_rows) {
      gemm_block(product, rows_from(a, start), b, sink.out + start * n, n, length, k, n);
    } else {
      const GemmOperand<T> columns{b.data + (b.transposed ? start * b.leading : start),
                                   b.transposed, b.leading};
      gemm_block(product, a, columns, sink.out + start, n, m, k, length);
    }
  };
  if (blocks == 1) {
    run_block(0);
    return;
  }
  parallel_for(blocks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t block = begin; block < end; ++block) run_block(block);
  });
}

/// sink = a [m, k] @ b [k, n], each operand stored contiguous (as [k, m] or [n, k] when
/// transposed), with 0 < k, n <= kMaxBlasDimension and m too when a is transposed; rows beyond
/// what an int counts go to further calls.
template <class T>
void multiply_matrices(const T* a, bool a_transposed, const T* b, bool b_transposed,
                       const RowSink<T>& sink, int64_t m, int64_t k, int64_t n) {
  const GemmOperand<T> b_operand{b, b_transposed, b_transposed ? k : n};
  const GemmOperand<T> a_operand{a, a_transposed, a_transposed ? m : k};
  for (int64_t row = 0; row < m; row += kMaxBlasDimension) {
    const RowSink<T> rows_sink{sink.out == nullptr ? nullptr : sink.out + row * n, sink.epilogue,
                               sink.first_row + row};
    gemm(rows_from(a_operand, row), b_operand, rows_sink, std::min(m - row, kMaxBlasDimension), k,
         n);
  }
}

/// The product of `node` into `out` (null: only through the epilogue), with 0 < k.
template <class T>
void multiply(const ir::Node& node, const memory::Buffer& a, bool a_transposed,
              const memory::Buffer& b, bool b_transposed, T* out, const RowEpilogue* epilogue) {
  const Shape& a_shape = node.inputs[0]->shape;
  const Shape& b_shape = node.inputs[1]->shape;
  const auto [m, k, n, batch] = ir::MatmulShape::of(node);
  const T* a_data = a.data_as<T>();
  const T* b_data = b.data_as<T>();
  const int64_t batch_count = shape_size(batch);
  const int64_t a_batch_count = shape_size(Shape(a_shape.begin(), a_shape.end() - 2));
  const int64_t b_batch_count = shape_size(Shape(b_shape.begin(), b_shape.end() - 2));
  // One b for every batch and a neither broadcast nor transposed: a's matrices lie one after
  // another exactly like the output's, so [batch * m, k] @ [k, n] is the whole product in one
  // call.
  if (b_batch_count == 1 && a_batch_count == batch_count && !a_transposed) {
    multiply_matrices(a_data, a_transposed, b_data, b_transposed, RowSink<T>{out, epilogue, 0},
                      batch_count * m, k, n);
    return;
  }
  const std::vector<int64_t> a_strides = reference::detail::matmul_batch_strides(a_shape, batch);
  const std::vector<int64_t> b_strides = reference::detail::matmul_batch_strides(b_shape, batch);
  reference::detail::walk_strided<2>(
      batch, {a_strides.data(), b_strides.data()}, {0, 0},
      [&](int64_t batch_index, const std::array<int64_t, 2>& offset) {
        const RowSink<T> sink{out == nullptr ? nullptr : out + batch_index * m * n, epilogue,
                              batch_index * m};
        multiply_matrices(a_data + offset[0], a_transposed, b_data + offset[1], b_transposed, sink,
                          m, k, n);
      });
}

/// Whether BLAS computes `node`'s product: a float32 or float64 one whose extents fit its ints.
bool blas_takes(const ir::Node& node, bool a_transposed) {
  if (node.dtype != float32 && node.dtype != float64) return false;
  const Shape& a_shape = node.inputs[0]->shape;
  const Shape& b_shape = node.inputs[1]->shape;
  // k and n are leading dimensions, and so is m when a is stored transposed.
  return a_shape[a_shape.size() - 1] <= kMaxBlasDimension &&
         b_shape[b_shape.size() - 1] <= kMaxBlasDimension &&
         (!a_transposed || a_shape[a_shape.size() - 2] <= kMaxBlasDimension);
}

int64_t inner_extent(const ir::Node& node) {
  const Shape& a_shape = node.inputs[0]->shape;
  return a_shape[a_shape.size() - 1];
}

}  // namespace

void load_matmul_libraries(const ir::Node& node) {
  if (node.dtype != float32) return;
  // The rows of all the matrices, which blas_matmul may take as one product; read from the
  // shapes in place, as a launch asks for every matmul it holds.
  const int64_t columns = node.shape.back();
  const int64_t rows = columns == 0 ? 0 : node.size() / columns;
  if (onednn_takes(rows, inner_extent(node), columns)) load_onednn();
}

// Half the core's second-level cache: the mlp's first layer with its bias and relu took
// 30.3-30.5 ms in blocks of 256 KiB, 28.5-29.5 in blocks of 512 KiB, and 28.5-40 in blocks of
// 1 MiB, this machine's whole L2.
int64_t epilogue_block_bytes() {
  static const int64_t bytes = [] {
    const long level2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return level2 > 0 ? int64_t{level2} / 2 : int64_t{256} << 10;
  }();
  return bytes;
}

bool blas_matmul(const ir::Node& node, const memory::Buffer& a, bool a_transposed,
                 const memory::Buffer& b, bool b_transposed, memory::Buffer& out) {
  if (!blas_takes(node, a_transposed)) return false;
  keep_blas_single_threaded();
  if (out.size() == 0) return true;
  // BLAS rejects a leading dimension of 0; an empty sum is 0.
  if (inner_extent(node) == 0) {
    std::memset(out.data(), 0, out.size() * dtype_size(node.dtype));
    return true;
  }
  if (node.dtype == float32) {
    multiply<float>(node, a, a_transposed, b, b_transposed, out.data_as<float>(), nullptr);
  } else {
    multiply<double>(node, a, a_transposed, b, b_transposed, out.data_as<double>(), nullptr);
  }
  return true;
}

bool blas_matmul(const ir::Node& node, const memory::Buffer& a, bool a_transposed,
                 const memory::Buffer& b, bool b_transposed, memory::Buffer* out,
                 const RowEpilogue& epilogue) {
  const int64_t n = node.shape.back();
  if (!blas_takes(node, a_transposed) || inner_extent(node) == 0 || node.size() == 0 ||
      kBlockGranule * n * dtype_size(node.dtype) > kMaxEpilogueBlockBytes) {
    return false;
  }
  keep_blas_single_threaded();
  if (node.dtype == float32) {
    multiply<float>(node, a, a_transposed, b, b_transposed,
                    out == nullptr ? nullptr : out->data_as<float>(), &epilogue);
  } else {
    multiply<double>(node, a, a_transposed, b, b_transposed,
                     out == nullptr ? nullptr : out->data_as<double>(), &epilogue);
  }
  return true;
}

}  // namespace lz::runtime
