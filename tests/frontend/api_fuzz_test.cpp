// Fuzzing of the public API: random sequences of calls (creation, elementwise ops with tensors and
// C++ numbers on either side, reductions, movement, matmul, softmax), with invalid arguments mixed
// in often. Every call must either return a tensor or throw lz::Error opening with "[op]"; a
// rejected call must record nothing; a returned tensor must have the dtype and shape this file
// predicts on its own (numpy broadcasting, the promotion rules of frontend/recording.h); and the
// recorded tensors, evaluated, must agree with the reference interpreter on a copy of their graph,
// and so must the gradients lz::vjp records for some of them (the backward graph, fused and
// compiled, against the interpreter).
//
// CI runs a fixed set of seeds. A longer campaign (program k uses seed LAZULI_API_FUZZ_SEED + k):
//
//   LAZULI_API_FUZZ_PROGRAMS=20000 LAZULI_API_FUZZ_SEED=1000
//   build/release/tests/frontend/frontend_api_fuzz_tests
//
// A failure prints the seed of its program and the calls of that program up to the failure.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <unordered_set>
#include <variant>
#include <vector>

#include <lazuli/lazuli.h>

#include "frontend/evaluation.h"
#include "ir/clone.h"
#include "ir/graph.h"
#include "ir/pending_list.h"
#include "memory/buffer.h"
#include "reference/differential_check.h"
#include "reference/interpreter.h"
#include "support/environment.h"

namespace lz {
namespace {

// ---------------------------------------------------------------------------------------------
// Settings, read once.

struct FuzzSettings {
  uint64_t first_seed = 0;
  int programs = 800;       // the CI set: seconds in a release build (mostly compiling)
  int sync_programs = 100;  // run again with LZ_ENGINE=sync, where a stray record is computed
};

const FuzzSettings& fuzz_settings() {
  static const FuzzSettings settings = [] {
    FuzzSettings result;
    constexpr int64_t kMaxPrograms = std::numeric_limits<int>::max();
    result.programs = static_cast<int>(
        support::integer_from_environment("LAZULI_API_FUZZ_PROGRAMS", 0, kMaxPrograms)
            .value_or(result.programs));
    result.sync_programs = std::min(result.sync_programs, result.programs);
    result.first_seed = static_cast<uint64_t>(
        support::integer_from_environment("LAZULI_API_FUZZ_SEED", 0).value_or(0));
    return result;
  }();
  return settings;
}

constexpr int kCallsPerProgram = 30;
constexpr int kPoolSize = 8;
constexpr int64_t kMaxPoolElements = 1024;  // larger results are checked but not kept
constexpr int kMaxReportedFailures = 10;

// ---------------------------------------------------------------------------------------------
// The independent model: what a call must do.

/// Reject: throw lz::Error. Accept: return a tensor of exactly this dtype and shape. Either: not
/// modelled (only the error format and "nothing recorded" are checked).
struct Expectation {
  enum class Kind { Reject, Accept, Either } kind = Kind::Either;
  DType dtype = float32;
  Shape shape;
};

Expectation rejected() { return {Expectation::Kind::Reject, float32, {}}; }
Expectation accepted(DType dtype, Shape shape) {
  return {Expectation::Kind::Accept, dtype, std::move(shape)};
}
Expectation unmodelled() { return {Expectation::Kind::Either, float32, {}}; }

int rank(DType dtype) {
  switch (dtype) {
    case DType::Bool: return 0;
    case DType::Int32: return 1;
    case DType::Int64: return 2;
    case DType::Float32: return 3;
    case DType::Float64: return 4;
  }
  return 0;
}
DType promoted(DType a, DType b) { return rank(a) >= rank(b) ? a : b; }

std::optional<Shape> broadcast(const Shape& a, const Shape& b) {
  const size_t ndim = std::max(a.size(), b.size());
  Shape result(ndim);
  for (size_t i = 0; i < ndim; ++i) {
    const int64_t x = i < a.size() ? a[a.size() - 1 - i] : 1;
    const int64_t y = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (x != y && x != 1 && y != 1) return std::nullopt;
    result[ndim - 1 - i] = x == 1 ? y : x;
  }
  return result;
}

std::optional<int64_t> axis_in(int64_t axis, int64_t ndim) {
  if (axis < -ndim || axis >= ndim) return std::nullopt;
  return axis < 0 ? axis + ndim : axis;
}

/// A C++ number operand of one of the types users write, with what the model needs of it.
using Number = std::variant<bool, int32_t, int64_t, uint64_t, float, double>;

enum class Category { Bool, Integer, Floating };

Category category_of(const Number& number) {
  if (std::holds_alternative<bool>(number)) return Category::Bool;
  if (std::holds_alternative<float>(number) || std::holds_alternative<double>(number)) {
    return Category::Floating;
  }
  return Category::Integer;
}

/// The dtype a tensor of `dtype` and a number of `category` are computed in (PyTorch's rule).
DType promoted_with(DType dtype, Category category) {
  const int tensor_category = dtype == bool_ ? 0 : is_integer(dtype) ? 1 : 2;
  if (static_cast<int>(category) <= tensor_category) return dtype;
  return category == Category::Integer ? int64 : float32;
}

/// Whether `number` can be held by a parameter of `dtype` (only integers can fail to fit).
bool fits(const Number& number, DType dtype) {
  if (is_floating(dtype) || category_of(number) == Category::Bool) return true;
  if (const auto* value = std::get_if<uint64_t>(&number)) {
    if (*value > static_cast<uint64_t>(INT64_MAX)) return false;
    return dtype != int32 || *value <= static_cast<uint64_t>(INT32_MAX);
  }
  const int64_t value = std::holds_alternative<int32_t>(number) ? std::get<int32_t>(number)
                                                                : std::get<int64_t>(number);
  if (dtype == int32) return value >= INT32_MIN && value <= INT32_MAX;
  return dtype == int64;
}

bool is_negative(const Number& number) {
  return std::visit(
      [](auto value) {
        if constexpr (std::is_signed_v<decltype(value)>) return value < 0;
        return false;
      },
      number);
}

std::string number_string(const Number& number) {
  return std::visit(
      [](auto value) {
        using T = decltype(value);
        if constexpr (std::is_same_v<T, bool>) return std::string(value ? "true" : "false");
        if constexpr (std::is_same_v<T, uint64_t>) return std::to_string(value) + "u";
        if constexpr (std::is_same_v<T, float>) return std::to_string(value) + "f";
        return std::to_string(value);
      },
      number);
}

// ---------------------------------------------------------------------------------------------
// Binary ops: the same table drives the calls and the model.

enum class Binary {
  Add,
  Sub,
  Mul,
  Div,
  Pow,
  Maximum,
  Minimum,
  Equal,
  NotEqual,
  Less,
  LessEqual,
  Greater,
  GreaterEqual
};
constexpr Binary kLastBinary = Binary::GreaterEqual;

const char* binary_name(Binary op) {
  static constexpr const char* kNames[] = {
      "add",   "sub",       "mul",  "div",        "pow",     "maximum",      "minimum",
      "equal", "not_equal", "less", "less_equal", "greater", "greater_equal"};
  return kNames[static_cast<int>(op)];
}

bool is_comparison(Binary op) { return op >= Binary::Equal; }

template <class A, class B>
Tensor apply(Binary op, const A& a, const B& b) {
  switch (op) {
    case Binary::Add: return a + b;
    case Binary::Sub: return a - b;
    case Binary::Mul: return a * b;
    case Binary::Div: return a / b;
    case Binary::Pow: return pow(a, b);
    case Binary::Maximum: return maximum(a, b);
    case Binary::Minimum: return minimum(a, b);
    case Binary::Equal: return a == b;
    case Binary::NotEqual: return a != b;
    case Binary::Less: return a < b;
    case Binary::LessEqual: return a <= b;
    case Binary::Greater: return a > b;
    case Binary::GreaterEqual: return a >= b;
  }
  return {};
}

/// The result of `op` computed in `dtype` over `shape`, as the documented rules say.
Expectation binary_result(Binary op, DType dtype, const Shape& shape) {
  if (op == Binary::Div && !is_floating(dtype)) dtype = float32;
  if (is_comparison(op)) return accepted(bool_, shape);
  const bool arithmetic =
      op == Binary::Add || op == Binary::Sub || op == Binary::Mul || op == Binary::Pow;
  if (arithmetic && dtype == bool_) return rejected();
  return accepted(dtype, shape);
}

// ---------------------------------------------------------------------------------------------
// The fuzzer.

std::string type_string(const Tensor& tensor) {
  if (!tensor.defined()) return "<empty handle>";
  return std::string(dtype_short_name(tensor.dtype())) + shape_string(tensor.shape());
}

template <class T>
std::string list_string(const std::vector<T>& values) {
  std::string text = "{";
  for (size_t i = 0; i < values.size(); ++i) text += (i ? "," : "") + std::to_string(values[i]);
  return text + "}";
}

int64_t pending_count() { return ir::PendingList::global().size(); }

class ApiFuzzer {
 public:
  ApiFuzzer(uint64_t seed, bool sync_engine) : random_(seed), seed_(seed), sync_(sync_engine) {}

  /// Runs one program of random calls, then checks values and that the pool leaves nothing behind.
  void run() {
    const int64_t pending_at_start = pending_count();
    for (int i = 0; i < 3; ++i) create();
    for (int i = 0; i < kCallsPerProgram && failures_ < kMaxReportedFailures; ++i) step();
    // One or the other: each evaluates the pool's forward graph, after which it is data, which
    // has no gradient.
    if (chance(0.5)) {
      check_values(pool_);
    } else if (!sync_) {
      check_gradients();
    }
    if (had_error_) check_runtime_usable();
    pool_.clear();
    if (pending_count() != pending_at_start) {
      fail("dropping every tensor of the program left " +
           std::to_string(pending_count() - pending_at_start) +
           " more pending nodes than at its start");
    }
  }

  int calls() const { return calls_; }
  int rejections() const { return rejections_; }
  int failures() const { return failures_; }
  int value_checks() const { return value_checks_; }
  int gradient_checks() const { return gradient_checks_; }

 private:
  // ---- Random choices --------------------------------------------------------------------

  int uniform(int low, int high) { return std::uniform_int_distribution<int>(low, high)(random_); }
  bool chance(double p) { return std::bernoulli_distribution(p)(random_); }
  template <class T>
  const T& pick(const std::vector<T>& values) {
    return values[uniform(0, static_cast<int>(values.size()) - 1)];
  }

  DType random_dtype() {
    static const std::vector<DType> kWeighted = {float32, float32, float32, float64,
                                                 int32,   int32,   int64,   bool_};
    return pick(kWeighted);
  }

  int64_t random_dim() {
    const int roll = uniform(0, 99);
    if (roll < 6) return 0;
    if (roll < 30) return 1;
    return uniform(2, 4);
  }

  Shape random_shape(int max_ndim = 3) {
    const int ndim = std::min(max_ndim, uniform(0, 9) == 0 ? 0 : uniform(1, 3));
    Shape shape;
    for (int d = 0; d < ndim; ++d) shape.push_back(random_dim());
    return shape;
  }

  /// Mostly a shape that broadcasts with `base` (some dims 1, fewer leading dims), sometimes one
  /// that does not.
  Shape related_shape(const Shape& base) {
    Shape shape = base;
    if (chance(0.3) && !shape.empty())
      shape.erase(shape.begin(), shape.begin() + uniform(1, shape.size()));
    for (int64_t& dim : shape) {
      if (chance(0.25)) dim = 1;
      if (chance(0.08)) dim = random_dim();
    }
    if (chance(0.1) && shape.size() < 4) shape.insert(shape.begin(), uniform(1, 2));
    return shape;
  }

  Shape some_shape() {
    if (!pool_.empty() && chance(0.7)) return related_shape(pool_tensor().shape());
    return random_shape();
  }

  Number random_number() {
    switch (uniform(0, 11)) {
      case 0: return chance(0.5);
      case 1:
      case 2: return static_cast<int32_t>(uniform(-4, 4));
      case 3: return static_cast<int64_t>(uniform(-4, 4));
      case 4: return int64_t{3'000'000'000};  // fits int64, not int32
      case 5: return static_cast<uint64_t>(uniform(0, 3));
      case 6: return std::numeric_limits<uint64_t>::max();  // fits no integer dtype
      case 7: return static_cast<float>(uniform(-8, 8)) / 4;
      case 8: return std::numeric_limits<double>::infinity();
      default: return static_cast<double>(uniform(-8, 8)) / 4;
    }
  }

  const Tensor& pool_tensor() { return pool_[uniform(0, static_cast<int>(pool_.size()) - 1)]; }

  /// A tensor of the pool, now and then an empty handle (every op must reject one by name).
  Tensor operand() {
    if (pool_.empty() || chance(0.02)) return Tensor();
    return pool_tensor();
  }

  /// An axis, now and then out of range.
  int random_axis(int ndim) {
    if (chance(0.1)) return pick(std::vector<int>{ndim, -ndim - 1, 7, -9, INT32_MIN});
    if (ndim == 0) return uniform(-1, 0);
    return uniform(-ndim, ndim - 1);
  }

  // ---- Performing a call ---------------------------------------------------------------------

  void fail(const std::string& what) {
    ++failures_;
    std::string trace;
    for (const std::string& line : trace_) trace += "    " + line + "\n";
    ADD_FAILURE() << what << "\n  program seed " << seed_ << (sync_ ? " (sync engine)" : "")
                  << ", calls so far:\n"
                  << trace;
  }

  /// Runs `call`, checks it against `expected` and keeps the result in the pool.
  void perform(const std::string& op, const std::string& description, const Expectation& expected,
               const std::function<Tensor()>& call) {
    ++calls_;
    const int64_t pending_before = pending_count();
    const int64_t evaluations_before = stats().evaluations;
    std::string outcome;
    std::optional<Tensor> result;
    try {
      result = call();
    } catch (const Error& error) {
      ++rejections_;
      had_error_ = true;
      const std::string message = error.what();
      trace_.push_back(description + " -> rejected: " + message);
      const std::string prefix = "[" + op + "]";
      if (message.rfind(prefix, 0) != 0)
        fail("the error of " + op + " does not open with " + prefix);
      if (pending_count() != pending_before) {
        fail(op + " was rejected but the pending nodes went from " +
             std::to_string(pending_before) + " to " + std::to_string(pending_count()));
      }
      if (sync_ && stats().evaluations != evaluations_before) {
        fail(op + " was rejected but first computed " +
             std::to_string(stats().evaluations - evaluations_before) +
             " recorded node(s) in the sync engine: it recorded before validating");
      }
      if (expected.kind == Expectation::Kind::Accept) {
        fail(op + " rejected a valid call; expected " + dtype_short_name(expected.dtype) +
             shape_string(expected.shape));
      }
      return;
    } catch (const std::exception& error) {
      trace_.push_back(description + " -> threw a non-lz::Error: " + error.what());
      fail(op + " threw an exception that is not lz::Error");
      return;
    } catch (...) {
      trace_.push_back(description + " -> threw a non-exception");
      fail(op + " threw something that is not a std::exception");
      return;
    }
    trace_.push_back(description + " -> " + type_string(*result));
    if (!result->defined()) {
      fail(op + " returned an empty handle");
      return;
    }
    if (expected.kind == Expectation::Kind::Reject) {
      fail(op + " accepted an invalid call");
    } else if (expected.kind == Expectation::Kind::Accept &&
               (result->dtype() != expected.dtype || result->shape() != expected.shape)) {
      fail(op + " returned " + type_string(*result) + ", expected " +
           dtype_short_name(expected.dtype) + shape_string(expected.shape));
    }
    keep(*result);
  }

  void keep(const Tensor& tensor) {
    if (tensor.size() > kMaxPoolElements) return;
    if (static_cast<int>(pool_.size()) < kPoolSize) {
      pool_.push_back(tensor);
    } else {
      pool_[uniform(0, kPoolSize - 1)] = tensor;
    }
  }

  // ---- Calls ----------------------------------------------------------------------------------

  void step() {
    const int roll = uniform(0, 99);
    if (pool_.empty() || roll < 12) return create();
    if (roll < 34) return binary();
    if (roll < 40) return unary();
    if (roll < 44) return where_call();
    if (roll < 47) return astype_call();
    if (roll < 59) return reduction();
    if (roll < 62) return argmax_call();
    if (roll < 82) return movement();
    if (roll < 92) return matmul_call();
    return softmax_call();
  }

  void create() {
    Shape shape = random_shape();
    if (chance(0.08) && !shape.empty()) shape[uniform(0, shape.size() - 1)] = -uniform(1, 3);
    const bool negative = std::any_of(shape.begin(), shape.end(), [](int64_t d) { return d < 0; });
    const std::string shape_text = shape_string(shape);
    DType dtype = random_dtype();
    switch (uniform(0, 6)) {
      case 0: {  // from_vector, sometimes with the wrong number of values
        const int64_t count =
            negative ? 3
                     : std::max<int64_t>(0, shape_size(shape) + (chance(0.1) ? uniform(-1, 1) : 0));
        const bool valid = !negative && count == shape_size(shape);
        std::vector<float> floats;
        std::vector<int32_t> ints;
        for (int64_t i = 0; i < count; ++i) {
          floats.push_back(static_cast<float>(uniform(-16, 16)) / 8);
          ints.push_back(uniform(-5, 5));
        }
        if (is_integer(dtype)) {
          return perform(
              "from_vector",
              "from_vector<i32>(" + std::to_string(count) + " values, " + shape_text + ")",
              valid ? accepted(int32, shape) : rejected(),
              [&] { return from_vector(ints, shape); });
        }
        return perform("from_vector",
                       "from_vector<f32>(" + std::to_string(count) + " values, " + shape_text + ")",
                       valid ? accepted(float32, shape) : rejected(),
                       [&] { return from_vector(floats, shape); });
      }
      case 1: {
        const double value = chance(0.1) ? pick(std::vector<double>{NAN, 1e12, -3e9, 0.5})
                                         : static_cast<double>(uniform(-3, 3));
        bool valid = !negative;
        if (dtype == int32) valid = valid && std::isfinite(value) && std::fabs(value) < 2.2e9;
        if (dtype == int64) valid = valid && std::isfinite(value);
        return perform("full",
                       "full(" + shape_text + ", " + std::to_string(value) + ", " +
                           dtype_short_name(dtype) + ")",
                       valid ? accepted(dtype, shape) : rejected(),
                       [&] { return full(shape, value, dtype); });
      }
      case 2: {
        const bool use_zeros = chance(0.5);
        const std::string op = use_zeros ? "zeros" : "ones";
        return perform(op, op + "(" + shape_text + ", " + dtype_short_name(dtype) + ")",
                       negative ? rejected() : accepted(dtype, shape),
                       [&] { return use_zeros ? zeros(shape, dtype) : ones(shape, dtype); });
      }
      case 3: {
        double start = uniform(-5, 5);
        double stop = uniform(-5, 8);
        double step = pick(std::vector<double>{1, 1, 2, -1, -2, 0, 0.5, 3});
        if (chance(0.05)) stop = std::numeric_limits<double>::infinity();
        const std::string text = "arange(" + std::to_string(start) + ", " + std::to_string(stop) +
                                 ", " + std::to_string(step) + ", " + dtype_short_name(dtype) + ")";
        Expectation expected = unmodelled();
        if (step == 0 || !std::isfinite(stop) || dtype == bool_) {
          expected = rejected();
        } else if (is_floating(dtype) || step == std::trunc(step)) {
          const double count = std::ceil((stop - start) / step);
          expected = accepted(dtype, {count > 0 ? static_cast<int64_t>(count) : 0});
        }
        return perform("arange", text, expected, [&] { return arange(start, stop, step, dtype); });
      }
      case 4: {
        const double low = uniform(-3, 1);
        const double high = chance(0.1) ? low - 1 : low + uniform(0, 4);
        const bool valid = !negative && dtype != bool_ && low <= high;
        const uint64_t seed = random_();
        return perform("random_uniform",
                       "random_uniform(" + shape_text + ", " + std::to_string(low) + ", " +
                           std::to_string(high) + ", " + dtype_short_name(dtype) + ")",
                       valid ? accepted(dtype, shape) : rejected(),
                       [&] { return random_uniform(shape, seed, low, high, dtype); });
      }
      case 5: {
        const double std = chance(0.1) ? -1 : uniform(0, 2);
        const bool valid = !negative && is_floating(dtype) && std >= 0;
        const uint64_t seed = random_();
        return perform("random_normal",
                       "random_normal(" + shape_text + ", std " + std::to_string(std) + ", " +
                           dtype_short_name(dtype) + ")",
                       valid ? accepted(dtype, shape) : rejected(),
                       [&] { return random_normal(shape, seed, 0, std, dtype); });
      }
      default: {  // a bool tensor, which no creation op makes directly
        if (negative) shape = random_shape();
        const Tensor values = random_uniform(shape, random_(), -1, 1);
        keep(values > 0);
        return;
      }
    }
  }

  void binary() {
    const auto op = static_cast<Binary>(uniform(0, static_cast<int>(kLastBinary)));
    const std::string name = binary_name(op);
    const Tensor a = operand();
    const int form = uniform(0, 3);  // 0, 1: tensor op tensor; 2: tensor op number; 3: number op
    if (form <= 1) {
      Tensor b = operand();
      if (a.defined() && chance(0.5)) {
        Shape shape = related_shape(a.shape());
        b = random_uniform(shape, random_(), -2, 2, random_dtype() == bool_ ? int32 : float32);
        if (chance(0.2)) b = b.astype(random_dtype());
      }
      Expectation expected = rejected();
      if (a.defined() && b.defined()) {
        const std::optional<Shape> shape = broadcast(a.shape(), b.shape());
        if (shape) expected = binary_result(op, promoted(a.dtype(), b.dtype()), *shape);
      }
      return perform(name, name + "(" + type_string(a) + ", " + type_string(b) + ")", expected,
                     [&] { return apply(op, a, b); });
    }
    const Number number = random_number();
    Expectation expected = rejected();
    if (a.defined()) {
      DType dtype = promoted_with(a.dtype(), category_of(number));
      const bool negative_integer_power = op == Binary::Pow && form == 2 && is_integer(dtype) &&
                                          category_of(number) != Category::Floating &&
                                          is_negative(number);
      // The number becomes a parameter of the dtype the op is computed in.
      const DType parameter_dtype = op == Binary::Div && !is_floating(dtype) ? float32 : dtype;
      if (fits(number, parameter_dtype) && !negative_integer_power) {
        expected = binary_result(op, dtype, a.shape());
      }
    }
    const std::string text = number_string(number);
    if (form == 2) {
      return perform(name, name + "(" + type_string(a) + ", " + text + ")", expected, [&] {
        return std::visit([&](auto value) { return apply(op, a, value); }, number);
      });
    }
    return perform(name, name + "(" + text + ", " + type_string(a) + ")", expected, [&] {
      return std::visit([&](auto value) { return apply(op, value, a); }, number);
    });
  }

  void unary() {
    using Function = Tensor (*)(const Tensor&, std::source_location);
    // Every public unary function of the op table, and unary minus.
    static const std::vector<std::pair<std::string, Function>> kFunctions = {
#define LZ_UNARY_FUNCTION_OP(Enum, name, ...) {#name, &lz::name},
#include "lazuli/op_table.def"
        {"neg", [](const Tensor& x, std::source_location) { return -x; }},
    };
    const auto& [name, function] = pick(kFunctions);
    const Tensor x = operand();
    Expectation expected = rejected();
    if (x.defined()) {
      // As in PyTorch: these keep an integer dtype (and refuse bool); the rest compute integers
      // and bools in float32.
      const bool keeps_dtype = name == "relu" || name == "abs" || name == "square" || name == "neg";
      if (!keeps_dtype) {
        expected = accepted(is_floating(x.dtype()) ? x.dtype() : float32, x.shape());
      } else if (x.dtype() != bool_) {
        expected = accepted(x.dtype(), x.shape());
      }
    }
    perform(name, name + "(" + type_string(x) + ")", expected,
            [&]() -> Tensor { return function(x, std::source_location::current()); });
  }

  /// where(cond, a, b) with tensors or numbers as values.
  void where_call() {
    Tensor cond = operand();
    if (cond.defined() && chance(0.8) && cond.dtype() != bool_) cond = cond > 0;
    const Tensor a = operand();
    const Tensor b = operand();
    const bool a_number = chance(0.3);
    const bool b_number = chance(0.3);
    const Number a_value = random_number();
    const Number b_value = random_number();
    const std::string text = "where(" + type_string(cond) + ", " +
                             (a_number ? number_string(a_value) : type_string(a)) + ", " +
                             (b_number ? number_string(b_value) : type_string(b)) + ")";
    Expectation expected = rejected();
    const bool handles = cond.defined() && (a_number || a.defined()) && (b_number || b.defined());
    if (handles && cond.dtype() == bool_) {
      DType dtype;
      if (!a_number && !b_number) {
        dtype = promoted(a.dtype(), b.dtype());
      } else if (!a_number) {
        dtype = promoted_with(a.dtype(), category_of(b_value));
      } else if (!b_number) {
        dtype = promoted_with(b.dtype(), category_of(a_value));
      } else {
        dtype = promoted_with(promoted_with(bool_, category_of(a_value)), category_of(b_value));
      }
      std::optional<Shape> shape = broadcast(cond.shape(), a_number ? Shape{} : a.shape());
      if (shape) shape = broadcast(*shape, b_number ? Shape{} : b.shape());
      const bool numbers_fit =
          (!a_number || fits(a_value, dtype)) && (!b_number || fits(b_value, dtype));
      if (shape && numbers_fit) expected = accepted(dtype, *shape);
    }
    perform("where", text, expected, [&] {
      return std::visit(
          [&](auto x, auto y) {
            if (a_number && b_number) return where(cond, x, y);
            if (a_number) return where(cond, x, b);
            if (b_number) return where(cond, a, y);
            return where(cond, a, b);
          },
          a_value, b_value);
    });
  }

  void astype_call() {
    const Tensor x = operand();
    const DType dtype = random_dtype();
    const bool method = chance(0.5);
    perform("astype", "astype(" + type_string(x) + ", " + dtype_short_name(dtype) + ")",
            x.defined() ? accepted(dtype, x.shape()) : rejected(),
            [&] { return method ? x.astype(dtype) : astype(x, dtype); });
  }

  std::vector<int> random_axes(int ndim) {
    std::vector<int> axes;
    const int count = uniform(0, 9) == 0 ? 0 : uniform(0, std::max(ndim, 1));
    for (int i = 0; i < count; ++i) axes.push_back(random_axis(ndim));
    if (chance(0.05) && !axes.empty()) axes.push_back(axes[0]);                         // duplicate
    if (chance(0.05) && !axes.empty() && axes[0] >= 0) axes.push_back(axes[0] - ndim);  // alias
    return axes;
  }

  void reduction() {
    static const std::vector<std::string> kNames = {"sum", "mean", "max", "min"};
    const std::string& name = pick(kNames);
    const Tensor x = operand();
    const int ndim = x.defined() ? x.ndim() : 1;
    const std::vector<int> axes = random_axes(ndim);
    const bool keepdims = chance(0.4);
    Expectation expected = rejected();
    if (x.defined()) {
      std::vector<bool> reduced(ndim, axes.empty());
      bool valid = true;
      for (int axis : axes) {
        const std::optional<int64_t> d = axis_in(axis, ndim);
        valid = valid && d && !reduced[*d];
        if (valid) reduced[*d] = true;
      }
      Shape shape;
      for (int d = 0; valid && d < ndim; ++d) {
        const bool needs_identity = name == "max" || name == "min";
        if (reduced[d] && needs_identity && x.shape()[d] == 0) valid = false;
        if (!reduced[d]) shape.push_back(x.shape()[d]);
        if (reduced[d] && keepdims) shape.push_back(1);
      }
      DType dtype = x.dtype();
      if (name == "sum" && !is_floating(dtype)) dtype = int64;
      if (name == "mean" && !is_floating(dtype)) dtype = float32;
      if (valid) expected = accepted(dtype, shape);
    }
    perform(name,
            name + "(" + type_string(x) + ", axes " + list_string(axes) +
                (keepdims ? ", keepdims)" : ")"),
            expected, [&] {
              if (name == "sum") return sum(x, axes, keepdims);
              if (name == "mean") return mean(x, axes, keepdims);
              if (name == "max") return max(x, axes, keepdims);
              return min(x, axes, keepdims);
            });
  }

  void argmax_call() {
    const bool minimum = chance(0.5);
    const std::string name = minimum ? "argmin" : "argmax";
    const Tensor x = operand();
    const int axis = random_axis(x.defined() ? x.ndim() : 1);
    const bool keepdims = chance(0.4);
    Expectation expected = rejected();
    if (x.defined()) {
      const std::optional<int64_t> d = axis_in(axis, x.ndim());
      if (d && x.shape()[*d] != 0) {
        Shape shape = x.shape();
        if (keepdims) {
          shape[*d] = 1;
        } else {
          shape.erase(shape.begin() + *d);
        }
        expected = accepted(int64, shape);
      }
    }
    perform(name, name + "(" + type_string(x) + ", " + std::to_string(axis) + ")", expected,
            [&] { return minimum ? argmin(x, axis, keepdims) : argmax(x, axis, keepdims); });
  }

  void movement() {
    const Tensor x = operand();
    if (!x.defined()) {
      return perform("reshape", "reshape(<empty handle>, {})", rejected(),
                     [&] { return reshape(x, {}); });
    }
    const Shape& shape = x.shape();
    const int ndim = x.ndim();
    switch (uniform(0, 6)) {
      case 0: return reshape_call(x);
      case 1: {
        std::vector<int> perm;
        for (int d = 0; d < ndim; ++d) perm.push_back(d);
        std::shuffle(perm.begin(), perm.end(), random_);
        if (chance(0.3)) perm.clear();
        for (int& axis : perm) {
          if (chance(0.2)) axis -= ndim;
        }
        if (chance(0.1) && !perm.empty()) perm[uniform(0, perm.size() - 1)] = random_axis(ndim);
        if (chance(0.05)) perm.push_back(0);
        // Valid when each axis appears once (or perm is empty: reversed).
        std::vector<bool> seen(ndim, false);
        bool valid = perm.empty() || static_cast<int>(perm.size()) == ndim;
        Shape result;
        for (int axis : perm) {
          const std::optional<int64_t> d = axis_in(axis, ndim);
          valid = valid && d && !seen[*d];
          if (!valid) break;
          seen[*d] = true;
          result.push_back(shape[*d]);
        }
        if (perm.empty()) result.assign(shape.rbegin(), shape.rend());
        return perform("transpose", "transpose(" + type_string(x) + ", " + list_string(perm) + ")",
                       valid ? accepted(x.dtype(), result) : rejected(),
                       [&] { return transpose(x, perm); });
      }
      case 2: {
        Shape target = shape;
        for (int64_t& dim : target) {
          if (dim == 1 && chance(0.5)) dim = uniform(0, 3);
        }
        if (chance(0.3)) target.insert(target.begin(), uniform(0, 3));
        if (chance(0.1)) target = random_shape();
        if (chance(0.03)) target.push_back(-1);
        bool valid = target.size() >= shape.size();
        for (int64_t dim : target) valid = valid && dim >= 0;
        for (size_t i = 1; valid && i <= shape.size(); ++i) {
          const int64_t from = shape[shape.size() - i];
          valid = from == 1 || from == target[target.size() - i];
        }
        return perform("broadcast_to",
                       "broadcast_to(" + type_string(x) + ", " + shape_string(target) + ")",
                       valid ? accepted(x.dtype(), target) : rejected(),
                       [&] { return broadcast_to(x, target); });
      }
      case 3: return slice_call(x);
      case 4: {
        std::vector<Tensor> parts = {x};
        const int axis = random_axis(std::max(ndim, 1));
        const int count = uniform(0, 2);
        for (int i = 0; i < count; ++i) {
          Shape part_shape = shape;
          const std::optional<int64_t> d = axis_in(axis, ndim);
          if (d) part_shape[*d] = uniform(0, 3);
          if (chance(0.15)) part_shape = related_shape(shape);
          parts.push_back(chance(0.2) ? operand()
                                      : ones(part_shape, chance(0.7) ? x.dtype() : random_dtype()));
        }
        if (chance(0.05)) parts.clear();
        bool valid = !parts.empty() && ndim > 0 && axis_in(axis, ndim).has_value();
        DType dtype = x.dtype();
        Shape result = shape;
        for (size_t i = 1; valid && i < parts.size(); ++i) {
          const Tensor& part = parts[i];
          valid = part.defined() && part.ndim() == ndim;
          for (int d = 0; valid && d < ndim; ++d) {
            valid = d == *axis_in(axis, ndim) || part.shape()[d] == shape[d];
          }
          if (valid) {
            dtype = promoted(dtype, part.dtype());
            result[*axis_in(axis, ndim)] += part.shape()[*axis_in(axis, ndim)];
          }
        }
        std::string text = "concatenate({";
        for (const Tensor& part : parts) text += type_string(part) + " ";
        text += "}, " + std::to_string(axis) + ")";
        return perform("concatenate", text, valid ? accepted(dtype, result) : rejected(),
                       [&] { return concatenate(parts, axis); });
      }
      case 5: {
        const int axis = chance(0.1) ? pick(std::vector<int>{ndim + 1, -ndim - 2, 50})
                                     : uniform(-ndim - 1, ndim);
        Expectation expected = rejected();
        if (axis >= -ndim - 1 && axis <= ndim) {
          Shape result = shape;
          result.insert(result.begin() + (axis < 0 ? axis + ndim + 1 : axis), 1);
          expected = accepted(x.dtype(), result);
        }
        return perform("expand_dims",
                       "expand_dims(" + type_string(x) + ", " + std::to_string(axis) + ")",
                       expected, [&] { return expand_dims(x, axis); });
      }
      default: {
        std::vector<int> axes;
        for (int d = 0; d < ndim; ++d) {
          if ((shape[d] == 1 && chance(0.6)) || chance(0.1))
            axes.push_back(chance(0.3) ? d - ndim : d);
        }
        if (chance(0.1)) axes.push_back(random_axis(ndim));
        std::vector<bool> removed(ndim, axes.empty());
        bool valid = true;
        for (int axis : axes) {
          const std::optional<int64_t> d = axis_in(axis, ndim);
          valid = valid && d && !removed[*d] && shape[*d] == 1;
          if (valid) removed[*d] = true;
        }
        Shape result;
        for (int d = 0; d < ndim; ++d) {
          if (!removed[d] || (axes.empty() && shape[d] != 1)) result.push_back(shape[d]);
        }
        return perform("squeeze", "squeeze(" + type_string(x) + ", " + list_string(axes) + ")",
                       valid ? accepted(x.dtype(), result) : rejected(),
                       [&] { return squeeze(x, axes); });
      }
    }
  }

  void reshape_call(const Tensor& x) {
    const int64_t size = x.size();
    Shape target;
    const int form = uniform(0, 3);
    if (form == 0) {
      target = random_shape();  // usually the wrong size
    } else {
      // A factorization of the size, maybe with one dimension inferred.
      int64_t left = size;
      for (int64_t factor : {2, 3, 2}) {
        if (left != 0 && left % factor == 0 && chance(0.5)) {
          target.push_back(factor);
          left /= factor;
        }
      }
      target.push_back(left);
      std::shuffle(target.begin(), target.end(), random_);
      if (form == 2) target[uniform(0, target.size() - 1)] = -1;
      if (form == 3 && chance(0.3)) target.push_back(-1);
      if (form == 3 && chance(0.2)) target.push_back(-2);
      if (chance(0.1)) target.insert(target.begin(), 1);
    }
    const Shape written = target;
    // numpy's rules, computed here from scratch.
    Expectation expected = rejected();
    int inferred = -1;
    bool valid = true;
    int64_t known = 1;
    for (size_t d = 0; d < target.size(); ++d) {
      if (target[d] == -1 && inferred < 0) {
        inferred = static_cast<int>(d);
      } else if (target[d] < 0) {
        valid = false;
      } else {
        known *= target[d];
      }
    }
    if (valid && inferred >= 0) {
      valid = known != 0 && size % known == 0;
      if (valid) target[inferred] = size / known;
    } else if (valid) {
      valid = known == size;
    }
    if (valid) expected = accepted(x.dtype(), target);
    perform("reshape", "reshape(" + type_string(x) + ", " + shape_string(written) + ")", expected,
            [&] { return reshape(x, written); });
  }

  void slice_call(const Tensor& x) {
    const Shape& shape = x.shape();
    const int ndim = x.ndim();
    const int sliced = chance(0.1) ? ndim + 1 : uniform(0, ndim);
    std::vector<int64_t> start, stop, step;
    for (int d = 0; d < sliced; ++d) {
      const int64_t extent = d < ndim ? shape[d] : 1;
      start.push_back(chance(0.1) ? pick(std::vector<int64_t>{INT64_MIN, INT64_MAX, -100})
                                  : uniform(-extent - 1, extent + 1));
      stop.push_back(chance(0.1) ? pick(std::vector<int64_t>{INT64_MIN, INT64_MAX, 100})
                                 : uniform(-extent - 1, extent + 1));
      step.push_back(chance(0.05) ? pick(std::vector<int64_t>{0, INT64_MIN, INT64_MAX})
                                  : pick(std::vector<int64_t>{1, 1, 2, -1, -2, 3}));
    }
    if (chance(0.3) && std::all_of(step.begin(), step.end(), [](int64_t s) { return s == 1; })) {
      step.clear();
    }
    if (chance(0.05) && !stop.empty()) stop.pop_back();
    bool valid = sliced <= ndim && stop.size() == start.size();
    Shape result = shape;
    for (int d = 0; valid && d < sliced; ++d) {
      const int64_t s = step.empty() ? 1 : step[d];
      valid = s != 0;
      if (valid) result[d] = python_slice_length(start[d], stop[d], s, shape[d]);
    }
    perform("slice",
            "slice(" + type_string(x) + ", " + list_string(start) + ", " + list_string(stop) +
                ", " + list_string(step) + ")",
            valid ? accepted(x.dtype(), result) : rejected(),
            [&] { return slice(x, start, stop, step); });
  }

  /// len(range(n)[start:stop:step]) as Python computes it, in wide arithmetic.
  static int64_t python_slice_length(int64_t start, int64_t stop, int64_t step, int64_t n) {
    const auto clamp = [&](__int128 bound) -> __int128 {
      if (bound < 0) bound += n;
      if (step > 0) return std::clamp<__int128>(bound, 0, n);
      return std::clamp<__int128>(bound, -1, n - 1);
    };
    const __int128 first = clamp(start);
    const __int128 last = clamp(stop);
    const __int128 wide_step = step;
    if (step > 0)
      return first < last ? static_cast<int64_t>((last - first - 1) / wide_step + 1) : 0;
    return first > last ? static_cast<int64_t>((first - last - 1) / -wide_step + 1) : 0;
  }

  void matmul_call() {
    Tensor a = operand();
    Tensor b = operand();
    if (chance(0.7)) {
      // Build compatible operands (mostly): random batch, m, k, n; 1-d sometimes.
      const int64_t m = uniform(0, 4) == 0 ? 0 : uniform(1, 4);
      const int64_t k = uniform(0, 5) == 0 ? 0 : uniform(1, 4);
      const int64_t n = uniform(1, 4);
      Shape a_shape = {m, k};
      Shape b_shape = {k + (chance(0.1) ? 1 : 0), n};
      if (chance(0.3)) a_shape.insert(a_shape.begin(), uniform(1, 3));
      if (chance(0.3)) b_shape.insert(b_shape.begin(), chance(0.8) ? 1 : uniform(1, 3));
      if (chance(0.2)) a_shape = {k};
      if (chance(0.2)) b_shape = {k};
      const DType a_dtype = chance(0.8) ? float32 : random_dtype();
      const DType b_dtype = chance(0.8) ? a_dtype : random_dtype();
      a = random_uniform(a_shape, random_(), -2, 2, a_dtype == bool_ ? int32 : a_dtype);
      b = random_uniform(b_shape, random_(), -2, 2, b_dtype == bool_ ? int32 : b_dtype);
      if (a_dtype == bool_) a = a > 0;
      if (b_dtype == bool_) b = b > 0;
    }
    Expectation expected = rejected();
    if (a.defined() && b.defined() && a.ndim() > 0 && b.ndim() > 0) {
      const Shape& sa = a.shape();
      const Shape& sb = b.shape();
      const int64_t k_a = sa.back();
      const int64_t k_b = sb.size() == 1 ? sb[0] : sb[sb.size() - 2];
      const Shape batch_a(sa.begin(), sa.end() - std::min<size_t>(2, sa.size()));
      const Shape batch_b(sb.begin(), sb.end() - std::min<size_t>(2, sb.size()));
      std::optional<Shape> shape = broadcast(batch_a, batch_b);
      const DType dtype = promoted(a.dtype(), b.dtype());
      if (k_a == k_b && shape && dtype != bool_) {
        if (sa.size() > 1) shape->push_back(sa[sa.size() - 2]);
        if (sb.size() > 1) shape->push_back(sb.back());
        expected = accepted(dtype, *shape);
      }
    }
    perform("matmul", "matmul(" + type_string(a) + ", " + type_string(b) + ")", expected,
            [&] { return matmul(a, b); });
  }

  void softmax_call() {
    const Tensor x = operand();
    const int axis = chance(0.5) ? -1 : random_axis(x.defined() ? x.ndim() : 1);
    const bool logarithm = chance(0.5);
    const std::string name = logarithm ? "log_softmax" : "softmax";
    Expectation expected = rejected();
    if (x.defined() && axis_in(axis, x.ndim())) {
      expected = accepted(is_floating(x.dtype()) ? x.dtype() : float32, x.shape());
    }
    perform(name, name + "(" + type_string(x) + ", " + std::to_string(axis) + ")", expected,
            [&] { return logarithm ? log_softmax(x, axis) : softmax(x, axis); });
  }

  // ---- Values ----------------------------------------------------------------------------------

  /// Computes `tensors` through lazuli (to_vector) and their graph, copied, through the reference
  /// interpreter; the two must agree within reference/differential_check.h's tolerances.
  void check_values(const std::vector<Tensor>& tensors) {
    std::vector<ir::NodePtr> roots;
    std::vector<Tensor> outputs;
    std::unordered_set<const ir::Node*> seen;
    for (const Tensor& tensor : tensors) {
      if (tensor.defined() && seen.insert(tensor.node().get()).second) {
        roots.push_back(tensor.node());
        outputs.push_back(tensor);
      }
    }
    if (roots.empty()) return;
    ir::Graph graph;
    {
      const auto lock = frontend::lock_graph();
      graph = ir::Graph::collect(roots);
    }
    const ir::Graph copy = ir::clone_graph(graph);
    const auto index = copy.index();
    std::vector<bool> keep(copy.nodes.size(), false);
    for (const ir::NodePtr& output : copy.outputs) keep[index.at(output.get())] = true;
    const std::vector<std::shared_ptr<memory::Buffer>> reference = reference::interpret(copy, keep);
    ++value_checks_;
    for (size_t i = 0; i < outputs.size(); ++i) {
      std::shared_ptr<memory::Buffer> computed;
      try {
        computed = computed_values(outputs[i]);
      } catch (const std::exception& error) {
        trace_.push_back("to_vector(" + type_string(outputs[i]) + ") -> threw: " + error.what());
        fail("evaluating a tensor of the program failed");
        continue;
      }
      const std::string difference =
          reference::compare_buffers(as_float32(reference[index.at(copy.outputs[i].get())]).get(),
                                     as_float32(computed).get(), outputs[i].shape());
      if (!difference.empty()) {
        fail("the values of " + type_string(outputs[i]) +
             " differ from the reference interpreter's: " + difference);
      }
    }
  }

  /// The gradients of one floating tensor of the program, weighted by a random cotangent, with
  /// respect to a few others (lz::vjp records the backward pass as ops): each must have its
  /// input's shape and dtype, and, evaluated, agree with the reference interpreter on a copy of
  /// the backward graph, as check_values checks the forward values. This checks how backward
  /// graphs are optimized and compiled; the rules themselves are checked against finite
  /// differences (autodiff_test.cpp). Not in the sync engine, where every value is computed as
  /// it is recorded and so keeps no record of its inputs.
  void check_gradients() {
    std::vector<Tensor> floating;
    for (const Tensor& tensor : pool_) {
      if (tensor.defined() && is_floating(tensor.dtype())) floating.push_back(tensor);
    }
    if (floating.size() < 2) return;
    const Tensor output = pick(floating);
    std::vector<Tensor> inputs;
    for (int i = uniform(1, 3); i > 0; --i) inputs.push_back(pick(floating));
    const Tensor cotangent = random_uniform(output.shape(), random_(), -1, 1, output.dtype());
    std::vector<Tensor> grads;
    try {
      grads = vjp({output}, inputs, {cotangent});
    } catch (const std::exception& error) {
      trace_.push_back("vjp(" + type_string(output) + ") -> threw: " + error.what());
      fail("taking a gradient of floating tensors failed");
      return;
    }
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (grads[i].dtype() != inputs[i].dtype() || grads[i].shape() != inputs[i].shape()) {
        fail("the gradient " + type_string(grads[i]) + " does not match its input " +
             type_string(inputs[i]));
        return;
      }
    }
    trace_.push_back("vjp(" + type_string(output) + ", " + std::to_string(inputs.size()) +
                     " inputs)");
    ++gradient_checks_;
    check_values(grads);
  }

  /// float64 results may have been computed in float32 and converted (astype), so they are
  /// compared at float32's tolerances: rounded to float32, as the other buffers are returned.
  static std::shared_ptr<const memory::Buffer> as_float32(
      const std::shared_ptr<memory::Buffer>& buffer) {
    if (buffer == nullptr || buffer->dtype() != float64) return buffer;
    std::shared_ptr<memory::Buffer> rounded = memory::Buffer::allocate(float32, buffer->size());
    const auto* from = static_cast<const double*>(buffer->data());
    auto* to = static_cast<float*>(rounded->data());
    for (int64_t i = 0; i < buffer->size(); ++i) to[i] = static_cast<float>(from[i]);
    return rounded;
  }

  static std::shared_ptr<memory::Buffer> computed_values(const Tensor& tensor) {
    std::shared_ptr<memory::Buffer> buffer =
        memory::Buffer::allocate(tensor.dtype(), tensor.size());
    const auto copy_in = [&](auto values) {
      if (!values.empty()) std::memcpy(buffer->data(), values.data(), buffer->bytes());
    };
    switch (tensor.dtype()) {
      case DType::Float32: copy_in(tensor.to_vector<float>()); break;
      case DType::Float64: copy_in(tensor.to_vector<double>()); break;
      case DType::Int32: copy_in(tensor.to_vector<int32_t>()); break;
      case DType::Int64: copy_in(tensor.to_vector<int64_t>()); break;
      case DType::Bool: {
        const std::vector<bool> values = tensor.to_vector<bool>();
        auto* bytes = static_cast<uint8_t*>(buffer->data());
        for (size_t i = 0; i < values.size(); ++i) bytes[i] = values[i] ? 1 : 0;
        break;
      }
    }
    return buffer;
  }

  /// After errors, a fresh computation still gives the right answer.
  void check_runtime_usable() {
    try {
      const Tensor x = from_vector<float>({1, 2, 3, 4}, {2, 2});
      const std::vector<float> rows = sum(x * x + 1, {1}).to_vector<float>();
      if (rows != std::vector<float>{7, 27}) fail("after errors, sum(x * x + 1) is wrong");
    } catch (const std::exception& error) {
      fail(std::string("after errors, a fresh computation threw: ") + error.what());
    }
  }

  std::mt19937_64 random_;
  uint64_t seed_;
  bool sync_;
  std::vector<Tensor> pool_;
  std::vector<std::string> trace_;
  bool had_error_ = false;
  int calls_ = 0;
  int rejections_ = 0;
  int failures_ = 0;
  int value_checks_ = 0;
  int gradient_checks_ = 0;
};

/// Runs `count` programs and prints how many calls they made, and rejected.
void run_programs(int count, bool sync_engine) {
  int calls = 0;
  int rejections = 0;
  int failures = 0;
  int value_checks = 0;
  int gradient_checks = 0;
  for (int k = 0; k < count && failures < kMaxReportedFailures; ++k) {
    ApiFuzzer fuzzer(fuzz_settings().first_seed + static_cast<uint64_t>(k), sync_engine);
    fuzzer.run();
    calls += fuzzer.calls();
    rejections += fuzzer.rejections();
    failures += fuzzer.failures();
    value_checks += fuzzer.value_checks();
    gradient_checks += fuzzer.gradient_checks();
  }
  std::printf("%d programs, %d calls, %d rejected, %d value checks (%d of gradients)\n", count,
              calls, rejections, value_checks, gradient_checks);
  // The campaign must exercise both sides of every check.
  if (count >= 50) {
    EXPECT_GT(rejections, calls / 10) << "too few invalid calls";
    EXPECT_LT(rejections, calls / 2) << "too few valid calls";
  }
}

/// Runs `call` in the sync engine, where a recorded node is computed at once, and expects it to
/// be rejected by `op` without recording (so without computing) anything.
void expect_rejected_computing_nothing(const std::string& op, const std::function<void()>& call) {
  set_engine(Engine::Sync);
  const int64_t pending_before = pending_count();
  const int64_t evaluations_before = stats().evaluations;
  try {
    call();
    ADD_FAILURE() << op << " accepted an invalid call";
  } catch (const Error& error) {
    EXPECT_EQ(std::string(error.what()).rfind("[" + op + "]", 0), 0u) << error.what();
  }
  EXPECT_EQ(pending_count(), pending_before) << op;
  EXPECT_EQ(stats().evaluations, evaluations_before) << op << " computed a node before rejecting";
  set_engine(Engine::Async);
}

// Bugs the fuzzer found, fixed in the frontend; each call is the shortest one that showed it.
TEST(ApiFuzzTest, RegressionCasesFoundByTheFuzzer) {
  const Tensor flags = ones({4}, bool_);
  // A bool base with a negative integer exponent is computed in int64, an integer power.
  EXPECT_THROW(pow(flags, -2), Error);
  EXPECT_EQ(pow(flags, 2).dtype(), int64);
  EXPECT_EQ(pow(flags, -2.0).dtype(), float32);
  // The casts and constants of these ops were recorded before their operands were checked.
  const Tensor cond = ones({4, 1}, bool_);
  const Tensor integers = zeros({2, 2}, int64);
  const std::vector<Tensor> mismatched = {zeros({2, 3}), zeros({3, 3}, int32)};
  expect_rejected_computing_nothing(
      "where", [&] { where(cond, integers, std::numeric_limits<double>::infinity()); });
  expect_rejected_computing_nothing(
      "where", [&] { where(cond, flags, std::numeric_limits<uint64_t>::max()); });
  expect_rejected_computing_nothing("concatenate", [&] { concatenate(mismatched, 1); });
  expect_rejected_computing_nothing("add", [&] { flags + true; });
  expect_rejected_computing_nothing("mul", [&] { false * flags; });
  // Inputs all empty along the joined axis crashed the CPU code generator (no value to store).
  const Tensor joined = concatenate({zeros({2, 0}), zeros({2, 0})}, 1);
  EXPECT_EQ(joined.shape(), (Shape{2, 0}));
  EXPECT_TRUE(joined.to_vector<float>().empty());
  EXPECT_EQ(sum(joined, {1}).to_vector<float>(), (std::vector<float>{0, 0}));
}

TEST(ApiFuzzTest, RandomProgramsReturnPredictedTypesOrRejectCleanly) {
  run_programs(fuzz_settings().programs, /*sync_engine=*/false);
}

// In the sync engine every recorded node is computed at once, so a rejected op that recorded a
// cast or a scalar before validating shows up as an evaluation, even if the node is dropped again.
TEST(ApiFuzzTest, RejectedCallsComputeNothingInTheSyncEngine) {
  set_engine(Engine::Sync);
  run_programs(fuzz_settings().sync_programs, /*sync_engine=*/true);
  set_engine(Engine::Async);
}

}  // namespace
}  // namespace lz
