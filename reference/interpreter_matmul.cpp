// Batched matrix product: a [..., m, k] @ b [..., k, n], batch dimensions broadcast.
#include <algorithm>

#include "ir/matmul_shape.h"
#include "reference/interpreter_internal.h"

namespace lz::reference::detail {
namespace {

/// One [m, k] @ [k, n] product. Each output element sums over k in increasing order: floats
/// accumulate in double and round once, integers wrap.
template <class T>
void matrix_product(const T* a, const T* b, T* out, int64_t m, int64_t k, int64_t n,
                    std::vector<double>& row) {
  for (int64_t i = 0; i < m; ++i) {
    T* out_row = out + i * n;
    if constexpr (kIsFloating<T>) {
      // Looping over k outside j reads b row by row; each row[j] still sums in order of k.
      std::fill(row.begin(), row.end(), 0.0);
      for (int64_t p = 0; p < k; ++p) {
        const double a_ip = static_cast<double>(a[i * k + p]);
        const T* b_row = b + p * n;
        for (int64_t j = 0; j < n; ++j) row[j] += a_ip * static_cast<double>(b_row[j]);
      }
      for (int64_t j = 0; j < n; ++j) out_row[j] = static_cast<T>(row[j]);
    } else {
      std::fill(out_row, out_row + n, T{0});
      for (int64_t p = 0; p < k; ++p) {
        const T a_ip = a[i * k + p];
        const T* b_row = b + p * n;
        for (int64_t j = 0; j < n; ++j) {
          out_row[j] = wrapping_add(out_row[j], wrapping_mul(a_ip, b_row[j]));
        }
      }
    }
  }
}

}  // namespace

std::vector<int64_t> matmul_batch_strides(const Shape& shape, const Shape& batch) {
  const Shape own_batch(shape.begin(), shape.end() - 2);
  std::vector<int64_t> strides = broadcast_strides(own_batch, batch);
  const int64_t matrix_size = shape[shape.size() - 2] * shape[shape.size() - 1];
  for (int64_t& stride : strides) stride *= matrix_size;
  return strides;
}

void interpret_matmul(const ir::Node& node, const memory::Buffer& a, const memory::Buffer& b,
                      memory::Buffer& out) {
  const auto [m, k, n, batch] = ir::MatmulShape::of(node);
  const std::vector<int64_t> a_strides = matmul_batch_strides(node.inputs[0]->shape, batch);
  const std::vector<int64_t> b_strides = matmul_batch_strides(node.inputs[1]->shape, batch);
  visit_dtype(node.dtype, [&]<class T>(std::type_identity<T>) {
    if constexpr (std::is_same_v<T, bool>) {
      fail_unsupported_dtype(node, node.dtype);
    } else {
      std::vector<double> row(kIsFloating<T> ? n : 0);
      const T* a_data = a.data_as<T>();
      const T* b_data = b.data_as<T>();
      T* result = out.data_as<T>();
      walk_strided<2>(batch, {a_strides.data(), b_strides.data()}, {0, 0},
                      [&](int64_t batch_index, const std::array<int64_t, 2>& offset) {
                        matrix_product(a_data + offset[0], b_data + offset[1],
                                       result + batch_index * m * n, m, k, n, row);
                      });
    }
  });
}

}  // namespace lz::reference::detail
