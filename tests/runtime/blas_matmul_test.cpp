// blas_matmul against the reference interpreter: every shape the IR's matmul accepts (batched,
// broadcast batches, empty dimensions, vectors as 1 x K and K x 1 matrices) in float32 and float64.
#include "runtime/cpu/blas_matmul.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "ir/node.h"
#include "ir/type_inference.h"
#include "memory/buffer.h"
#include "reference/interpreter.h"
#include "runtime/thread_pool.h"

// Declared by OpenBLAS's cblas.h, which the test does not include (see
// runtime/cpu/blas_matmul.cpp).
extern "C" int openblas_get_num_threads(void);

namespace lz::runtime {
namespace {

using ir::Node;
using ir::NodePtr;
using ir::Op;

/// A `data` leaf of `shape` and `dtype` holding values drawn uniformly from [-1, 1).
NodePtr random_data(DType dtype, Shape shape, uint64_t seed) {
  auto node = std::make_shared<Node>();
  node->op = Op::Data;
  node->dtype = dtype;
  node->shape = std::move(shape);
  node->buffer = memory::Buffer::allocate(dtype, node->size());
  std::mt19937_64 engine(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  for (int64_t i = 0; i < node->size(); ++i) {
    const double value = uniform(engine);
    switch (dtype) {
      case DType::Float32: node->buffer->data_as<float>()[i] = static_cast<float>(value); break;
      case DType::Float64: node->buffer->data_as<double>()[i] = value; break;
      case DType::Int32:
        node->buffer->data_as<int32_t>()[i] = static_cast<int32_t>(std::floor(value * 10));
        break;
      case DType::Int64:
        node->buffer->data_as<int64_t>()[i] = static_cast<int64_t>(std::floor(value * 10));
        break;
      case DType::Bool: ADD_FAILURE() << "matmul has no bool operands"; break;
    }
  }
  return node;
}

/// A MatMul node over `a` and `b`, typed by the IR's rules.
NodePtr matmul_node(NodePtr a, NodePtr b) {
  auto node = std::make_shared<Node>();
  node->op = Op::MatMul;
  node->dtype = a->dtype;
  node->inputs = {std::move(a), std::move(b)};
  const ir::TensorType type = ir::infer_type(*node);
  node->dtype = type.dtype;
  node->shape = type.shape;
  return node;
}

/// A copy of `node`'s buffer with every element replaced by its absolute value.
template <class T>
std::shared_ptr<memory::Buffer> absolute_values(const Node& node) {
  auto result = memory::Buffer::allocate(node.dtype, node.size());
  for (int64_t i = 0; i < node.size(); ++i) {
    result->data_as<T>()[i] = std::abs(node.buffer->data_as<T>()[i]);
  }
  return result;
}

/// A buffer for `node`'s result filled with NaN, so that an element blas_matmul does not write
/// shows up.
template <class T>
std::shared_ptr<memory::Buffer> poisoned_output(const Node& node) {
  auto out = memory::Buffer::allocate(node.dtype, node.size());
  for (int64_t i = 0; i < node.size(); ++i) {
    out->data_as<T>()[i] = std::numeric_limits<T>::quiet_NaN();
  }
  return out;
}

std::string shape_text(const Shape& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

/// `node`'s matrices transposed (its last two axes swapped), element by element.
template <class T>
std::shared_ptr<memory::Buffer> transposed_copy(const Node& node) {
  const int64_t rows = node.shape[node.shape.size() - 2];
  const int64_t columns = node.shape.back();
  auto result = memory::Buffer::allocate(node.dtype, node.size());
  const T* from = node.buffer->data_as<T>();
  T* to = result->data_as<T>();
  for (int64_t matrix = 0; matrix < node.size(); matrix += rows * columns) {
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < columns; ++c) {
        to[matrix + c * rows + r] = from[matrix + r * columns + c];
      }
    }
  }
  return result;
}

/// Where blas_matmul puts the product: into a buffer, or through an epilogue (RowEpilogue), with
/// a buffer or without one.
enum class Through { Buffer, Epilogue, EpilogueAndBuffer };

/// Computes `node`'s product through an epilogue that copies each block of rows into `out`, and
/// checks the blocks: each row comes once, a block holds at most epilogue_block_bytes() of rows (or
/// 16 rows), and with EpilogueAndBuffer the rows the epilogue sees are the buffer's, which ends up
/// equal to `out`.
template <class T>
void multiply_through_epilogue(const Node& node, const memory::Buffer& a, bool a_transposed,
                               const memory::Buffer& b, bool b_transposed, Through through,
                               memory::Buffer& out) {
  const int64_t n = node.shape.back();
  const int64_t rows = node.size() / n;
  const std::shared_ptr<memory::Buffer> product =
      through == Through::EpilogueAndBuffer ? poisoned_output<T>(node) : nullptr;
  std::vector<std::atomic<int>> seen(rows);
  const int64_t max_block_bytes = std::max<int64_t>(epilogue_block_bytes(), 16 * n * sizeof(T));
  const RowEpilogue copy = [&](const void* block, int64_t first, int64_t count) {
    EXPECT_LE(count * n * static_cast<int64_t>(sizeof(T)), max_block_bytes);
    if (product != nullptr) {
      EXPECT_EQ(block, product->data_as<T>() + first * n);
    }
    std::memcpy(out.data_as<T>() + first * n, block, count * n * sizeof(T));
    for (int64_t row = first; row < first + count; ++row) ++seen[row];
  };
  ASSERT_TRUE(blas_matmul(node, a, a_transposed, b, b_transposed, product.get(), copy));
  for (int64_t row = 0; row < rows; ++row) EXPECT_EQ(seen[row], 1) << "row " << row;
  if (product != nullptr) {
    EXPECT_EQ(std::memcmp(product->data(), out.data(), node.size() * sizeof(T)), 0);
  }
}

/// Checks blas_matmul on a [a_shape] @ b [b_shape] against the interpreter, handing it either
/// operand stored transposed when asked, the product going `through` a buffer or an epilogue. An
/// element may differ by `relative` times the sum of |a_ik * b_kj| over its products (the
/// interpreter's result on the operands' absolute values), the scale of the rounding error of a
/// sum in another order.
template <class T>
void expect_matches_interpreter(const Shape& a_shape, const Shape& b_shape, double relative,
                                uint64_t seed = 1, bool a_transposed = false,
                                bool b_transposed = false, Through through = Through::Buffer) {
  SCOPED_TRACE(shape_text(a_shape) + (a_transposed ? " stored transposed" : "") + " @ " +
               shape_text(b_shape) + (b_transposed ? " stored transposed" : ""));
  const NodePtr node = matmul_node(random_data(dtype_of<T>(), a_shape, seed),
                                   random_data(dtype_of<T>(), b_shape, seed + 1));
  const memory::Buffer& a = *node->inputs[0]->buffer;
  const memory::Buffer& b = *node->inputs[1]->buffer;
  const memory::Buffer* const inputs[] = {&a, &b};
  const std::shared_ptr<memory::Buffer> expected = reference::interpret_node(*node, inputs);
  const std::shared_ptr<memory::Buffer> a_abs = absolute_values<T>(*node->inputs[0]);
  const std::shared_ptr<memory::Buffer> b_abs = absolute_values<T>(*node->inputs[1]);
  const memory::Buffer* const absolute_inputs[] = {a_abs.get(), b_abs.get()};
  const std::shared_ptr<memory::Buffer> scale = reference::interpret_node(*node, absolute_inputs);

  const std::shared_ptr<memory::Buffer> out = poisoned_output<T>(*node);
  const std::shared_ptr<memory::Buffer> a_stored =
      a_transposed ? transposed_copy<T>(*node->inputs[0]) : node->inputs[0]->buffer;
  const std::shared_ptr<memory::Buffer> b_stored =
      b_transposed ? transposed_copy<T>(*node->inputs[1]) : node->inputs[1]->buffer;
  if (through == Through::Buffer) {
    ASSERT_TRUE(blas_matmul(*node, *a_stored, a_transposed, *b_stored, b_transposed, *out));
  } else {
    multiply_through_epilogue<T>(*node, *a_stored, a_transposed, *b_stored, b_transposed, through,
                                 *out);
  }
  int failures = 0;
  for (int64_t i = 0; i < node->size() && failures < 5; ++i) {
    const double got = out->data_as<T>()[i];
    const double want = expected->data_as<T>()[i];
    const double tolerance = relative * scale->data_as<T>()[i];
    if (!(std::abs(got - want) <= tolerance)) {
      ++failures;
      ADD_FAILURE() << "element " << i << " of " << shape_text(node->shape) << ": blas gives "
                    << got << ", the interpreter " << want << " (tolerance " << tolerance << ")";
    }
  }
}

struct MatMulShapes {
  Shape a;
  Shape b;
};

// Every batching case the IR allows; vectors are 1 x K and K x 1 matrices (the IR needs rank 2).
const std::vector<MatMulShapes> kShapes = {
    {{2, 3}, {3, 4}},
    {{1, 1}, {1, 1}},
    {{1, 7}, {7, 1}},                 // row times column: one dot product
    {{7, 1}, {1, 5}},                 // column times row: an outer product, K = 1
    {{1, 9}, {9, 6}},                 // one row
    {{6, 9}, {9, 1}},                 // one column
    {{257, 129}, {129, 65}},          // larger than a BLAS block, nothing a power of two
    {{301, 203}, {203, 97}},          // large enough for oneDNN (runtime/cpu/onednn_gemm.h)
    {{2, 150, 203}, {203, 97}},       // the same, batched and folded into one product
    {{1000, 3}, {3, 2}},              // tall and skinny
    {{2, 1000}, {1000, 3}},           // long contraction
    {{4, 3, 5}, {4, 5, 2}},           // same batch on both sides
    {{2, 3, 4, 5}, {5, 6}},           // b shared by every batch: folded into one product
    {{3, 4, 5}, {1, 5, 6}},           // b's batch of size 1: folded
    {{3, 4, 5}, {1, 1, 5, 6}},        // b with more batch dimensions, all of size 1: folded
    {{4, 5}, {3, 5, 6}},              // a shared by every batch
    {{1, 4, 5}, {3, 5, 6}},           // a's batch of size 1
    {{2, 1, 4, 5}, {1, 3, 5, 6}},     // both broadcast, along different dimensions
    {{3, 1, 4, 5}, {3, 5, 6}},        // batch [3, 1] against [3]: [3, 3]
    {{2, 3, 1, 4, 5}, {3, 2, 5, 6}},  // three batch dimensions, broadcasting inside
    {{0, 5}, {5, 3}},                 // M = 0
    {{4, 5}, {5, 0}},                 // N = 0
    {{4, 0}, {0, 3}},                 // K = 0: zeros
    {{0, 4, 5}, {5, 3}},              // empty batch
    {{2, 3, 0}, {2, 0, 4}},           // K = 0, batched
    {{2, 1, 3, 0}, {4, 0, 2}},        // K = 0, broadcast batch
    {{2, 0, 4, 5}, {1, 5, 3}},        // empty broadcast batch
};

TEST(BlasMatMulTest, Float32MatchesInterpreterOnEveryShape) {
  for (const MatMulShapes& shapes : kShapes) {
    expect_matches_interpreter<float>(shapes.a, shapes.b, 1e-4);
  }
}

TEST(BlasMatMulTest, Float64MatchesInterpreterOnEveryShape) {
  for (const MatMulShapes& shapes : kShapes) {
    expect_matches_interpreter<double>(shapes.a, shapes.b, 1e-12);
  }
}

// A transpose that only the matmul reads joins its kernel, and BLAS reads the transpose's input
// in place: each operand, or both, stored with its matrices transposed.
TEST(BlasMatMulTest, TransposedOperandsMatchInterpreterOnEveryShape) {
  for (const MatMulShapes& shapes : kShapes) {
    for (const auto& [a_transposed, b_transposed] :
         {std::pair(true, false), std::pair(false, true), std::pair(true, true)}) {
      expect_matches_interpreter<float>(shapes.a, shapes.b, 1e-4, 1, a_transposed, b_transposed);
      expect_matches_interpreter<double>(shapes.a, shapes.b, 1e-12, 1, a_transposed, b_transposed);
    }
  }
}

TEST(BlasMatMulTest, SmallProductIsExact) {
  auto a = random_data(float64, {2, 2}, 0);
  auto b = random_data(float64, {2, 3}, 0);
  const double a_values[] = {1, 2, 3, 4};
  const double b_values[] = {5, 6, 7, 8, 9, 10};
  std::copy(std::begin(a_values), std::end(a_values), a->buffer->data_as<double>());
  std::copy(std::begin(b_values), std::end(b_values), b->buffer->data_as<double>());
  const NodePtr node = matmul_node(a, b);
  const std::shared_ptr<memory::Buffer> out = poisoned_output<double>(*node);
  ASSERT_TRUE(blas_matmul(*node, *a->buffer, false, *b->buffer, false, *out));
  const double expected[] = {21, 24, 27, 47, 54, 61};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(out->data_as<double>()[i], expected[i]) << "element " << i;
}

TEST(BlasMatMulTest, KZeroWritesZerosOverEveryElement) {
  const NodePtr node =
      matmul_node(random_data(float32, {3, 2, 0}, 1), random_data(float32, {0, 4}, 2));
  const std::shared_ptr<memory::Buffer> out = poisoned_output<float>(*node);
  ASSERT_TRUE(
      blas_matmul(*node, *node->inputs[0]->buffer, false, *node->inputs[1]->buffer, false, *out));
  ASSERT_EQ(node->size(), 24);
  for (int64_t i = 0; i < node->size(); ++i) EXPECT_EQ(out->data_as<float>()[i], 0.0f) << i;
}

TEST(BlasMatMulTest, IntegerDtypesAreLeftToTheCaller) {
  for (DType dtype : {int32, int64}) {
    const NodePtr node =
        matmul_node(random_data(dtype, {2, 3, 4}, 1), random_data(dtype, {4, 5}, 2));
    auto out = memory::Buffer::allocate(dtype, node->size());
    std::fill_n(static_cast<unsigned char*>(out->data()), out->bytes(), 0xAB);
    EXPECT_FALSE(
        blas_matmul(*node, *node->inputs[0]->buffer, false, *node->inputs[1]->buffer, false, *out))
        << dtype_name(dtype);
    for (int64_t i = 0; i < out->bytes(); ++i) {
      ASSERT_EQ(static_cast<unsigned char*>(out->data())[i], 0xAB)
          << dtype_name(dtype) << ": byte " << i << " of the output was written";
    }
  }
}

// Products split into a block per thread of lazuli's pool (rows, or columns when a is stored
// transposed), with a last block shorter than the others at 3 and 5 threads; OpenBLAS itself
// stays on one thread.
TEST(BlasMatMulTest, ProductsSplitAcrossLazulisThreadsMatchTheInterpreter) {
  for (int threads : {1, 3, 2, 5}) {
    set_thread_count(threads);
    SCOPED_TRACE(std::to_string(threads) + " threads");
    expect_matches_interpreter<float>({2, 300, 200}, {200, 100}, 1e-4, threads);
    expect_matches_interpreter<double>({300, 200}, {2, 200, 100}, 1e-12, threads);
    for (const auto& [a_transposed, b_transposed] :
         {std::pair(false, true), std::pair(true, false), std::pair(true, true)}) {
      expect_matches_interpreter<float>({301, 203}, {203, 97}, 1e-4, threads, a_transposed,
                                        b_transposed);
      expect_matches_interpreter<double>({301, 203}, {203, 97}, 1e-12, threads, a_transposed,
                                         b_transposed);
    }
    EXPECT_EQ(openblas_get_num_threads(), 1);
  }
  set_thread_count(0);
}

// With an epilogue, the product comes in blocks of rows that stay in cache, split by rows
// across threads whatever the layout: many blocks per thread, batches in one call and matrix by
// matrix, operands stored transposed, with a product buffer and without one.
TEST(BlasMatMulTest, EpiloguesSeeEveryRowOnceInBlocksThatStayInCache) {
  for (int threads : {1, 2, 3}) {
    set_thread_count(threads);
    for (const Through through : {Through::Epilogue, Through::EpilogueAndBuffer}) {
      SCOPED_TRACE(std::to_string(threads) + " threads" +
                   (through == Through::Epilogue ? "" : ", with a product buffer"));
      expect_matches_interpreter<float>({2, 2000, 64}, {64, 200}, 1e-4, 7, false, false, through);
      expect_matches_interpreter<double>({300, 50}, {2, 50, 300}, 1e-12, 8, false, false, through);
      expect_matches_interpreter<float>({301, 203}, {203, 97}, 1e-4, 9, true, true, through);
      expect_matches_interpreter<float>({5, 3}, {3, 4}, 1e-4, 10, false, false, through);
    }
  }
  set_thread_count(0);
}

// An epilogue sees no empty sum (the caller writes zeros itself) and no row wider than a block
// kept in cache holds: blas_matmul leaves those to the caller.
TEST(BlasMatMulTest, EpiloguesRefuseEmptySumsAndRowsTooWideForTheCache) {
  const RowEpilogue never = [](const void*, int64_t, int64_t) {
    ADD_FAILURE() << "the epilogue ran";
  };
  const NodePtr empty_sum =
      matmul_node(random_data(float32, {3, 0}, 1), random_data(float32, {0, 4}, 2));
  EXPECT_FALSE(blas_matmul(*empty_sum, *empty_sum->inputs[0]->buffer, false,
                           *empty_sum->inputs[1]->buffer, false, nullptr, never));
  // 16 rows of 65,537 float32 take just over 4 MiB.
  const NodePtr wide =
      matmul_node(random_data(float32, {16, 2}, 3), random_data(float32, {2, 65537}, 4));
  EXPECT_FALSE(blas_matmul(*wide, *wide->inputs[0]->buffer, false, *wide->inputs[1]->buffer, false,
                           nullptr, never));
}

}  // namespace
}  // namespace lz::runtime
