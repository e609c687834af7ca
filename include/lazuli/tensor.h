// lz::Tensor and every op on it. Each call records a node into the pending graph and returns at
// once; nothing is computed until a blocking point (item, to_vector, <<, wait_to_read, waitall).
#pragma once

#include <chrono>
#include <concepts>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <source_location>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "lazuli/device.h"
#include "lazuli/dtype.h"

namespace lz {

namespace ir {
struct Node;
}

/// A C++ number usable as an operand: bool, any integer or floating type.
template <class T>
concept Number = std::is_arithmetic_v<T>;

/// The C++ types of tensor elements: float, double, int32_t, int64_t, bool.
template <class T>
concept Element = std::is_same_v<T, float> || std::is_same_v<T, double> ||
    std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t> || std::is_same_v<T, bool>;

/// A C++ number kept with its category, which decides the result dtype as in PyTorch: a scalar
/// never widens a tensor of its own category (float32 * 2.0 stays float32), but an int tensor times
/// 2.5 becomes float32. int64 values are kept exactly.
struct ScalarOperand {
  enum class Category : uint8_t { Bool, Integer, Floating };
  template <Number T>
  ScalarOperand(T value) {  // NOLINT(google-explicit-constructor): operands convert implicitly
    if constexpr (std::is_same_v<T, bool>) {
      category = Category::Bool;
      integer = value;
      floating = value;
    } else if constexpr (std::is_integral_v<T>) {
      // An unsigned value above INT64_MAX fits no dtype; ops reject it by name (see `exact`).
      if constexpr (std::is_unsigned_v<T> && sizeof(T) >= sizeof(int64_t)) {
        exact = value <= static_cast<T>(INT64_MAX);
      }
      category = Category::Integer;
      integer = static_cast<int64_t>(value);
      floating = static_cast<double>(value);
    } else {
      category = Category::Floating;
      floating = static_cast<double>(value);
      integer = 0;
    }
  }
  Category category;
  int64_t integer;
  double floating;
  bool exact = true;  // false when `integer` could not hold the value
};

class Tensor;

/// A tensor operand together with the place in the user's code that wrote the expression.
/// A parameter type only: it refers to its tensor without owning it.
/// Operators take their left tensor through this type so that errors and IR dumps point at the
/// user's line (operators cannot have a defaulted std::source_location parameter of their own).
struct Traced {
  Traced(const Tensor& tensor,  // NOLINT(google-explicit-constructor)
         std::source_location where = std::source_location::current())
      : tensor(tensor), where(where) {}
  const Tensor& tensor;
  std::source_location where;
};

/// Either a tensor or a C++ number: the right-hand side of a binary op. A parameter type only:
/// it refers to its tensor without owning it.
class Operand {
 public:
  Operand(const Tensor& tensor) : tensor_(&tensor) {}  // NOLINT(google-explicit-constructor)
  template <Number T>
  Operand(T value) : scalar_(value) {}  // NOLINT(google-explicit-constructor)
  const Tensor* tensor() const { return tensor_; }
  const ScalarOperand& scalar() const { return scalar_; }

 private:
  const Tensor* tensor_ = nullptr;
  ScalarOperand scalar_ = ScalarOperand(0);
};

/// The right-hand side of a compound assignment (`x += y`) with the place in the user's code
/// that wrote it: the left side must stay a plain Tensor& to be assigned, so the line travels
/// with the right. A parameter type only.
struct TracedOperand {
  TracedOperand(const Tensor& tensor,  // NOLINT(google-explicit-constructor)
                std::source_location where = std::source_location::current())
      : operand(tensor), where(where) {}
  template <Number T>
  TracedOperand(T value,  // NOLINT(google-explicit-constructor)
                std::source_location where = std::source_location::current())
      : operand(value), where(where) {}
  Operand operand;
  std::source_location where;
};

/// The axes a reduction runs over, as numpy takes them: none given ({}) for every axis, one
/// (`sum(x, 0)`), or several (`sum(x, {0, 2})`); negative axes count from the end.
class Axes {
 public:
  Axes() = default;
  // NOLINTBEGIN(google-explicit-constructor): implicit, so that sum(x, 0) and sum(x, {0, 1}) read
  Axes(int axis) : axes_{axis} {}
  Axes(std::initializer_list<int> axes) : axes_(axes) {}
  Axes(std::vector<int> axes) : axes_(std::move(axes)) {}
  // NOLINTEND(google-explicit-constructor)
  const std::vector<int>& list() const { return axes_; }

 private:
  std::vector<int> axes_;
};

// Every op records where the user called it, for errors and IR dumps.
#define LZ_HERE std::source_location loc = std::source_location::current()

/// A lazily computed n-dimensional array. Copying a Tensor copies a handle, not the data.
class Tensor {
 public:
  /// An empty handle; every op on it throws. Useful as a placeholder in containers.
  Tensor() = default;
  explicit Tensor(std::shared_ptr<ir::Node> node);

  Shape shape(LZ_HERE) const;
  DType dtype(LZ_HERE) const;
  Device device(LZ_HERE) const;
  /// Number of elements.
  int64_t size(LZ_HERE) const;
  int ndim(LZ_HERE) const;
  /// False for a default-constructed handle.
  bool defined() const { return node_ != nullptr; }

  /// Blocks until the value is computed and returns the only element. T must match dtype().
  template <Element T>
  T item(LZ_HERE) const;
  /// Blocks until the value is computed and returns all elements in row-major order.
  template <Element T>
  std::vector<T> to_vector(LZ_HERE) const;
  /// Blocks until the value is computed and returns its elements, row-major, where lazuli holds
  /// them, without a copy (a CUDA tensor's are copied to the host once): valid while this handle,
  /// or another to the same value, lives. T must match dtype().
  template <Element T>
  std::span<const T> data(LZ_HERE) const;
  /// Blocks until the value is computed and copies its elements, row-major, into `out`, which
  /// must hold exactly size() of them: `x.copy_to(std::span(buffer))`. T must match dtype().
  template <Element T>
  void copy_to(std::span<T> out, LZ_HERE) const;
  /// Blocks until this tensor (and only what it needs) is computed. Throws the lz::Error of a
  /// failure in the work it needs, naming the op and the line that recorded it.
  void wait_to_read(LZ_HERE) const;
  /// Starts computing this tensor on its device's stream and returns without waiting for it
  /// (it waits only under back-pressure: LZ_MAX_IN_FLIGHT launches or LZ_MEMORY_LIMIT / 2
  /// promised bytes already in flight).
  void eval_async(LZ_HERE) const;
  /// True once the value is computed (or its computation failed); never blocks.
  bool is_ready(LZ_HERE) const;
  /// Starts computing this tensor (as eval_async) and calls `callback` once it is computed or
  /// has failed: at once on the calling thread when it already is (its exceptions reach the
  /// caller), else later on lazuli's callback thread, one callback at a time in the order
  /// their tensors finish (on a GPU, in the order their work was queued: the callback thread
  /// waits for the device before each). Exceptions are reported on stderr and dropped. A callback
  /// may read tensors, record, and wait, even call waitall; waitall waits for the callbacks of the
  /// work it waited for.
  void then(std::function<void()> callback, LZ_HERE) const;

  /// The same values on `device` (this handle when it is already there). Starts computing this
  /// tensor on its own device, as eval_async, and returns without waiting for it: logical CPU
  /// devices share the host's memory, so the result is the same buffer, and work on `device` that
  /// reads it waits for the write through its event.
  Tensor to(Device device, LZ_HERE) const;

  /// The same values converted to `dtype` (float to int truncates toward zero).
  Tensor astype(DType dtype, LZ_HERE) const;

  /// Method forms of lz::sum, mean, max, min, reshape and transpose, as numpy users write them
  /// (`x.sum(1)`, `x.reshape({2, -1})`).
  Tensor sum(Axes axes = {}, bool keepdims = false, LZ_HERE) const;
  Tensor mean(Axes axes = {}, bool keepdims = false, LZ_HERE) const;
  Tensor max(Axes axes = {}, bool keepdims = false, LZ_HERE) const;
  Tensor min(Axes axes = {}, bool keepdims = false, LZ_HERE) const;
  Tensor reshape(Shape shape, LZ_HERE) const;
  Tensor transpose(std::vector<int> perm = {}, LZ_HERE) const;

  /// The IR node behind this handle (for inspection and tools).
  const std::shared_ptr<ir::Node>& node() const { return node_; }

 private:
  std::shared_ptr<ir::Node> node_;
};

#define LZ_DECLARE_READ(T)                                                         \
  extern template T Tensor::item<T>(std::source_location) const;                   \
  extern template std::vector<T> Tensor::to_vector<T>(std::source_location) const; \
  extern template std::span<const T> Tensor::data<T>(std::source_location) const;  \
  extern template void Tensor::copy_to<T>(std::span<T>, std::source_location) const;
LZ_DECLARE_READ(float)
LZ_DECLARE_READ(double)
LZ_DECLARE_READ(int32_t)
LZ_DECLARE_READ(int64_t)
LZ_DECLARE_READ(bool)
#undef LZ_DECLARE_READ

// ---- Creation --------------------------------------------------------------------------------

/// A tensor holding a copy of `data` (row-major) with the given shape.
template <Element T>
Tensor from_vector(const std::vector<T>& data, Shape shape, Device device = default_device(),
                   LZ_HERE);

/// How elements handed to from_data are laid out: row-major (C order, numpy's default) or
/// column-major (Fortran order, Eigen's and BLAS's default: the first index varies fastest).
enum class Order { RowMajor, ColumnMajor };

/// A tensor holding a copy of the shape_size(shape) elements at `data`, laid out in `order`
/// (the tensor itself is row-major, as every lazuli tensor).
template <Element T>
Tensor from_data(const T* data, Shape shape, Order order = Order::RowMajor,
                 Device device = default_device(), LZ_HERE);

/// A tensor over the caller's row-major elements at `data`, without a copy. The memory must stay
/// valid and unchanged until lazuli calls `release` (once, from whichever thread lets go last),
/// when no tensor or launch reads it any more; lazuli never writes it. A tensor on a CUDA device
/// copies it to the device once.
template <Element T>
Tensor borrow_data(const T* data, Shape shape, std::function<void()> release,
                   Device device = default_device(), LZ_HERE);

#define LZ_DECLARE_CREATION(T)                                                                    \
  extern template Tensor from_vector(const std::vector<T>&, Shape, Device, std::source_location); \
  extern template Tensor from_data(const T*, Shape, Order, Device, std::source_location);         \
  extern template Tensor borrow_data(const T*, Shape, std::function<void()>, Device,              \
                                     std::source_location);
LZ_DECLARE_CREATION(float)
LZ_DECLARE_CREATION(double)
LZ_DECLARE_CREATION(int32_t)
LZ_DECLARE_CREATION(int64_t)
LZ_DECLARE_CREATION(bool)
#undef LZ_DECLARE_CREATION

Tensor full(Shape shape, double value, DType dtype = float32, LZ_HERE);
Tensor zeros(Shape shape, DType dtype = float32, LZ_HERE);
Tensor ones(Shape shape, DType dtype = float32, LZ_HERE);
/// Values start, start+step, ... up to but excluding stop (numpy.arange).
Tensor arange(double start, double stop, double step = 1, DType dtype = float32, LZ_HERE);
/// Uniform in [low, high). Counter-based: the same seed gives the same values in every mode.
Tensor random_uniform(Shape shape, uint64_t seed, double low = 0, double high = 1,
                      DType dtype = float32, LZ_HERE);
/// Normal with the given mean and standard deviation; counter-based like random_uniform.
Tensor random_normal(Shape shape, uint64_t seed, double mean = 0, double std = 1,
                     DType dtype = float32, LZ_HERE);

// ---- Elementwise (numpy broadcasting, PyTorch type promotion) --------------------------------

Tensor operator+(Traced a, const Operand& b);
Tensor operator+(ScalarOperand a, Traced b);
Tensor operator-(Traced a, const Operand& b);
Tensor operator-(ScalarOperand a, Traced b);
Tensor operator*(Traced a, const Operand& b);
Tensor operator*(ScalarOperand a, Traced b);
/// True division: integer inputs give float32.
Tensor operator/(Traced a, const Operand& b);
Tensor operator/(ScalarOperand a, Traced b);
Tensor operator-(Traced a);
/// Compound assignment rebinds `a` to a newly recorded value (`x += y` is `x = x + y`): tensors
/// are immutable, and other handles to the old value keep it.
Tensor& operator+=(Tensor& a, TracedOperand b);
Tensor& operator-=(Tensor& a, TracedOperand b);
Tensor& operator*=(Tensor& a, TracedOperand b);
Tensor& operator/=(Tensor& a, TracedOperand b);

// Comparisons give bool tensors.
Tensor operator==(Traced a, const Operand& b);
Tensor operator==(ScalarOperand a, Traced b);
Tensor operator!=(Traced a, const Operand& b);
Tensor operator!=(ScalarOperand a, Traced b);
Tensor operator<(Traced a, const Operand& b);
Tensor operator<(ScalarOperand a, Traced b);
Tensor operator<=(Traced a, const Operand& b);
Tensor operator<=(ScalarOperand a, Traced b);
Tensor operator>(Traced a, const Operand& b);
Tensor operator>(ScalarOperand a, Traced b);
Tensor operator>=(Traced a, const Operand& b);
Tensor operator>=(ScalarOperand a, Traced b);

// Unary math. Integer and bool inputs of exp..sigmoid are computed in float32.
Tensor exp(const Tensor& x, LZ_HERE);
Tensor log(const Tensor& x, LZ_HERE);
Tensor sqrt(const Tensor& x, LZ_HERE);
Tensor rsqrt(const Tensor& x, LZ_HERE);
Tensor sin(const Tensor& x, LZ_HERE);
Tensor cos(const Tensor& x, LZ_HERE);
Tensor tanh(const Tensor& x, LZ_HERE);
Tensor sigmoid(const Tensor& x, LZ_HERE);
Tensor relu(const Tensor& x, LZ_HERE);
Tensor abs(const Tensor& x, LZ_HERE);
Tensor square(const Tensor& x, LZ_HERE);

/// base ** exponent. An integer base with a negative number as exponent is an error; with a
/// tensor exponent, negative powers of integers give 0 (1 for base 1, +-1 for base -1).
Tensor pow(const Tensor& base, const Operand& exponent, LZ_HERE);
Tensor pow(ScalarOperand base, const Tensor& exponent, LZ_HERE);
/// Elementwise maximum; NaN wins, as in numpy.
Tensor maximum(const Tensor& a, const Operand& b, LZ_HERE);
Tensor maximum(ScalarOperand a, const Tensor& b, LZ_HERE);
/// Elementwise minimum; NaN wins, as in numpy.
Tensor minimum(const Tensor& a, const Operand& b, LZ_HERE);
Tensor minimum(ScalarOperand a, const Tensor& b, LZ_HERE);
/// a where cond is true, else b. cond must be bool; all three broadcast together.
Tensor where(const Tensor& cond, const Operand& a, const Operand& b, LZ_HERE);
Tensor astype(const Tensor& x, DType dtype, LZ_HERE);

// ---- Reductions (axes = {} means all axes; negative axes count from the end) -----------------

/// Sum; bool and integer inputs are summed as int64 (as in PyTorch).
Tensor sum(const Tensor& x, Axes axes = {}, bool keepdims = false, LZ_HERE);
/// Mean; integer and bool inputs give float32.
Tensor mean(const Tensor& x, Axes axes = {}, bool keepdims = false, LZ_HERE);
/// Maximum; NaN wins. Reducing an empty axis is an error (there is no identity).
Tensor max(const Tensor& x, Axes axes = {}, bool keepdims = false, LZ_HERE);
Tensor min(const Tensor& x, Axes axes = {}, bool keepdims = false, LZ_HERE);
/// Index (int64) of the first maximum along `axis`; a NaN counts as the maximum.
Tensor argmax(const Tensor& x, int axis, bool keepdims = false, LZ_HERE);
/// Index (int64) of the first minimum along `axis`; a NaN counts as the minimum (as in numpy).
Tensor argmin(const Tensor& x, int axis, bool keepdims = false, LZ_HERE);

// ---- Movement --------------------------------------------------------------------------------

/// Same elements in a new shape; one dimension may be -1 (inferred).
Tensor reshape(const Tensor& x, Shape shape, LZ_HERE);
/// Permutes axes; an empty permutation reverses them.
Tensor transpose(const Tensor& x, std::vector<int> perm = {}, LZ_HERE);
Tensor broadcast_to(const Tensor& x, Shape shape, LZ_HERE);
/// numpy slicing per axis: x[start:stop:step]. Missing trailing axes are taken whole; negative
/// bounds count from the end and out-of-range bounds are clamped. An empty step means 1.
Tensor slice(const Tensor& x, std::vector<int64_t> start, std::vector<int64_t> stop,
             std::vector<int64_t> step = {}, LZ_HERE);
/// Joins tensors along an existing axis; dtypes are promoted to a common one.
Tensor concatenate(const std::vector<Tensor>& tensors, int axis = 0, LZ_HERE);
Tensor expand_dims(const Tensor& x, int axis, LZ_HERE);
/// Removes the given size-1 axes, or all size-1 axes when none are given.
Tensor squeeze(const Tensor& x, std::vector<int> axes = {}, LZ_HERE);
/// numpy.take_along_axis: out[..., i, ...] = x[..., indices[..., i, ...], ...] along `axis`, with
/// x and `indices` (int32 or int64, of x's rank) broadcast against each other on the other axes.
/// A negative index counts from the end. An index outside the axis reads NaN (floating x), the
/// lowest value (integer x) or true (bool x), as JAX's "fill" mode, so that it shows in the
/// result; its gradient is 0. The gradient adds each read's cotangent into a zero tensor shaped
/// like x, through a comparison with every position of the axis: (elements of the result) x (the
/// axis extent) operations, fused into one kernel, never a copy of that size.
Tensor take_along_axis(const Tensor& x, const Tensor& indices, int axis, LZ_HERE);
/// numpy.take: the slices of x at `indices` (int32 or int64, any shape) along `axis`, which the
/// indices' axes replace in the result: x (5, 7) and indices (2, 3) along axis 1 give (5, 2, 3).
/// Indices and gradient as in take_along_axis.
Tensor take(const Tensor& x, const Tensor& indices, int axis, LZ_HERE);
/// numpy.take without an axis: the elements of x flattened at `indices`, shaped like them.
Tensor take(const Tensor& x, const Tensor& indices, LZ_HERE);

// ---- Linear algebra and nn -------------------------------------------------------------------

/// numpy.matmul: 1-D operands are promoted to matrices, batch dimensions broadcast.
Tensor matmul(const Tensor& a, const Tensor& b, LZ_HERE);
/// Numerically stable softmax along `axis`.
Tensor softmax(const Tensor& x, int axis = -1, LZ_HERE);
Tensor log_softmax(const Tensor& x, int axis = -1, LZ_HERE);
/// log(sum(exp(x))) over `axes`, computed without overflow (the maximum is subtracted first);
/// integer and bool inputs give float32.
Tensor logsumexp(const Tensor& x, Axes axes = {}, bool keepdims = false, LZ_HERE);
/// labels (an integer tensor) as vectors of `classes` elements along a new last axis: 1 at the
/// label's position, 0 elsewhere (all 0 for a label outside [0, classes), as in JAX).
Tensor one_hot(const Tensor& labels, int64_t classes, DType dtype = float32, LZ_HERE);
/// The mean over the batch of -log(softmax(logits)[label]): logits of shape (..., classes),
/// labels an integer tensor of shape (...). Numerically stable (through logsumexp); its gradient
/// with respect to the logits is (softmax(logits) - one_hot(labels)) / batch. A label outside
/// [0, classes) makes its row's loss NaN, and so the mean: the mistake shows in the loss.
Tensor cross_entropy(const Tensor& logits, const Tensor& labels, LZ_HERE);

// ---- Blocking points -------------------------------------------------------------------------

/// Computes everything recorded so far that is still reachable and waits for every device's
/// work, then returns. Throws the earliest failure of background work not raised yet.
void waitall(LZ_HERE);
/// Starts computing `tensors` (one evaluation for all of them) and returns without waiting for
/// them (except under back-pressure, as Tensor::eval_async).
void eval_async(const std::vector<Tensor>& tensors, LZ_HERE);
/// numpy-like printing with shape and dtype; blocks until `x` is computed.
std::ostream& operator<<(std::ostream& out, const Tensor& x);

/// While alive on a thread, that thread's blocking points wait in slices of `slice` and call
/// `check` between them; an exception `check` throws leaves the blocking point, and the work goes
/// on (a later read waits for it again; once no tensor can read it, it is cancelled between
/// kernels). An evaluation that is not small then runs on its stream instead of on this thread,
/// so that its wait can be interrupted. For a program that must react while it waits: the Python
/// package checks for Ctrl-C. Scopes nest; the innermost one's check is called.
class InterruptibleWaits {
 public:
  explicit InterruptibleWaits(std::function<void()> check,
                              std::chrono::milliseconds slice = std::chrono::milliseconds(50));
  ~InterruptibleWaits();
  InterruptibleWaits(const InterruptibleWaits&) = delete;
  InterruptibleWaits& operator=(const InterruptibleWaits&) = delete;

 private:
  std::function<void()> check_;
  const std::function<void()>* previous_check_;
  std::chrono::milliseconds previous_slice_;
};

}  // namespace lz

#undef LZ_HERE
