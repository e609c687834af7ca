// Every public op against values computed independently by numpy. The cases live in
// tests/data/numpy_expectations.txt, written by tests/data/make_numpy_expectations.py (which also
// describes the format); each case is its own test, named after the case.
#include <gtest/gtest.h>

#include <lazuli/lazuli.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

constexpr const char* kDataFile = "numpy_expectations.txt";

// ---- The cases, as read from the file -----------------------------------------------------------

/// Values of one tensor: floating dtypes in `floats` (float32 values are exact as doubles),
/// integer and bool dtypes in `integers`.
struct TensorData {
  lz::DType dtype = lz::float32;
  lz::Shape shape;
  std::vector<double> floats;
  std::vector<int64_t> integers;
};

/// One operand of the call: a tensor, or a C++ number of kind "bool", "int" or "float".
struct Argument {
  bool is_tensor = true;
  TensorData tensor;
  std::string scalar_kind;
  int64_t scalar_integer = 0;
  double scalar_floating = 0;
};

struct Case {
  std::string name;
  int line = 0;
  std::string op;
  std::vector<Argument> arguments;
  std::map<std::string, std::vector<std::string>> params;
  TensorData expected;
  /// Set only for the stand-in case that reports a file that could not be read.
  std::string load_error;
};

class ParseError : public std::runtime_error {
 public:
  ParseError(int line, const std::string& message)
      : std::runtime_error("line " + std::to_string(line) + ": " + message) {}
};

std::vector<std::string> split(const std::string& text, char separator = ' ') {
  std::vector<std::string> tokens;
  std::string token;
  std::istringstream stream(text);
  while (std::getline(stream, token, separator)) {
    if (!token.empty()) tokens.push_back(token);
  }
  return tokens;
}

int64_t parse_integer(const std::string& token) {
  errno = 0;
  char* end = nullptr;
  const long long value = std::strtoll(token.c_str(), &end, 10);
  if (errno != 0 || end == token.c_str() || *end != '\0') {
    throw std::invalid_argument("'" + token + "' is not an integer");
  }
  return value;
}

double parse_floating(const std::string& token) {
  char* end = nullptr;
  const double value = std::strtod(token.c_str(), &end);
  if (end == token.c_str() || *end != '\0') {
    throw std::invalid_argument("'" + token + "' is not a number");
  }
  return value;
}

lz::DType parse_dtype(const std::string& token) {
  for (lz::DType dtype : lz::kAllDTypes) {
    if (token == lz::dtype_name(dtype)) return dtype;
  }
  throw std::invalid_argument("'" + token + "' is not a dtype");
}

/// "()" is 0-d; otherwise dimensions joined by 'x' ("3x4", "2x-1" for reshape targets).
lz::Shape parse_shape(const std::string& token) {
  lz::Shape shape;
  if (token == "()") return shape;
  for (const std::string& dim : split(token, 'x')) shape.push_back(parse_integer(dim));
  return shape;
}

/// "DTYPE SHAPE V..." starting at tokens[first].
TensorData parse_tensor(const std::vector<std::string>& tokens, size_t first) {
  if (tokens.size() < first + 2) throw std::invalid_argument("needs a dtype and a shape");
  TensorData data;
  data.dtype = parse_dtype(tokens[first]);
  data.shape = parse_shape(tokens[first + 1]);
  const size_t count = tokens.size() - first - 2;
  if (static_cast<int64_t>(count) != lz::shape_size(data.shape)) {
    throw std::invalid_argument("shape " + lz::shape_string(data.shape) + " needs " +
                                std::to_string(lz::shape_size(data.shape)) + " values, got " +
                                std::to_string(count));
  }
  for (size_t i = first + 2; i < tokens.size(); ++i) {
    if (lz::is_floating(data.dtype))
      data.floats.push_back(parse_floating(tokens[i]));
    else
      data.integers.push_back(parse_integer(tokens[i]));
  }
  return data;
}

std::vector<Case> parse_cases(std::istream& in) {
  std::vector<Case> cases;
  int64_t declared = -1;
  Case* current = nullptr;
  std::string text;
  int line = 0;
  while (std::getline(in, text)) {
    ++line;
    const std::vector<std::string> tokens = split(text);
    if (tokens.empty() || tokens[0][0] == '#') continue;
    const std::string& keyword = tokens[0];
    try {
      if (keyword == "cases") {
        declared = parse_integer(tokens.at(1));
      } else if (keyword == "case") {
        if (current != nullptr) throw std::invalid_argument("previous case has no 'end'");
        cases.emplace_back();
        current = &cases.back();
        current->name = tokens.at(1);
        current->line = line;
      } else if (current == nullptr) {
        throw std::invalid_argument("'" + keyword + "' outside a case");
      } else if (keyword == "op") {
        current->op = tokens.at(1);
      } else if (keyword == "tensor") {
        Argument argument;
        argument.tensor = parse_tensor(tokens, 1);
        current->arguments.push_back(argument);
      } else if (keyword == "scalar") {
        Argument argument;
        argument.is_tensor = false;
        argument.scalar_kind = tokens.at(1);
        if (argument.scalar_kind == "float") {
          argument.scalar_floating = parse_floating(tokens.at(2));
        } else if (argument.scalar_kind == "int" || argument.scalar_kind == "bool") {
          argument.scalar_integer = parse_integer(tokens.at(2));
        } else {
          throw std::invalid_argument("unknown scalar kind '" + argument.scalar_kind + "'");
        }
        current->arguments.push_back(argument);
      } else if (keyword == "param") {
        current->params[tokens.at(1)] = {tokens.begin() + 2, tokens.end()};
      } else if (keyword == "expect") {
        current->expected = parse_tensor(tokens, 1);
      } else if (keyword == "end") {
        if (current->op.empty()) throw std::invalid_argument("case without 'op'");
        current = nullptr;
      } else {
        throw std::invalid_argument("unknown keyword '" + keyword + "'");
      }
    } catch (const std::exception& error) {
      throw ParseError(line, error.what());
    }
  }
  if (current != nullptr) throw ParseError(line, "the last case has no 'end'");
  if (declared != static_cast<int64_t>(cases.size())) {
    throw ParseError(line, "the file declares " + std::to_string(declared) + " cases but holds " +
                               std::to_string(cases.size()) + " (truncated?)");
  }
  return cases;
}

/// The data folder: LAZULI_TEST_DATA (set by CTest for each test), else the source tree's
/// tests/data compiled in by CMake. The fallback exists because gtest_discover_tests lists the
/// tests without the ENVIRONMENT that CTest gives the tests themselves.
std::string data_folder() {
  if (const char* folder = std::getenv("LAZULI_TEST_DATA"); folder != nullptr && *folder != '\0') {
    return folder;
  }
#ifdef LAZULI_TEST_DATA_DIR
  return LAZULI_TEST_DATA_DIR;
#else
  throw std::runtime_error(
      "LAZULI_TEST_DATA is not set: run through ctest, or set it to the repository's tests/data");
#endif
}

/// Every case in the file, read once. A file that cannot be read gives one stand-in case that
/// fails with the reason, so that the failure shows in the test list instead of zero tests.
const std::vector<Case>& all_cases() {
  static const std::vector<Case> cases = [] {
    std::string path;
    try {
      path = data_folder() + "/" + kDataFile;
      std::ifstream in(path);
      if (!in) throw std::runtime_error("cannot be opened");
      return parse_cases(in);
    } catch (const std::exception& error) {
      Case stand_in;
      stand_in.name = "DataFileUnreadable";
      stand_in.load_error = (path.empty() ? "" : path + ": ") + error.what();
      return std::vector<Case>{stand_in};
    }
  }();
  return cases;
}

// ---- Running a case through the lazuli API ------------------------------------------------------

lz::Tensor make_tensor(const TensorData& data) {
  switch (data.dtype) {
    case lz::DType::Float32:
      return lz::from_vector(std::vector<float>(data.floats.begin(), data.floats.end()),
                             data.shape);
    case lz::DType::Float64: return lz::from_vector(data.floats, data.shape);
    case lz::DType::Int32:
      return lz::from_vector(std::vector<int32_t>(data.integers.begin(), data.integers.end()),
                             data.shape);
    case lz::DType::Int64: return lz::from_vector(data.integers, data.shape);
    case lz::DType::Bool:
      return lz::from_vector(std::vector<bool>(data.integers.begin(), data.integers.end()),
                             data.shape);
  }
  throw std::logic_error("unknown dtype");
}

/// Calls fn with the argument's number as the C++ type a user would write: bool, int64_t, double.
template <class Fn>
lz::Tensor with_number(const Argument& argument, Fn fn) {
  if (argument.scalar_kind == "bool") return fn(argument.scalar_integer != 0);
  if (argument.scalar_kind == "int") return fn(argument.scalar_integer);
  return fn(argument.scalar_floating);
}

/// One binary op, with the tensor or the number on either side.
template <class A, class B>
lz::Tensor binary(const std::string& op, const A& a, const B& b) {
  if (op == "add") return a + b;
  if (op == "sub") return a - b;
  if (op == "mul") return a * b;
  if (op == "div") return a / b;
  if (op == "eq") return a == b;
  if (op == "ne") return a != b;
  if (op == "lt") return a < b;
  if (op == "le") return a <= b;
  if (op == "gt") return a > b;
  if (op == "ge") return a >= b;
  if (op == "pow") return lz::pow(a, b);
  if (op == "maximum") return lz::maximum(a, b);
  if (op == "minimum") return lz::minimum(a, b);
  throw std::invalid_argument("unknown binary op '" + op + "'");
}

bool is_binary(const std::string& op) {
  static const char* const kOps[] = {"add", "sub", "mul", "div", "eq",      "ne",     "lt",
                                     "le",  "gt",  "ge",  "pow", "maximum", "minimum"};
  for (const char* name : kOps) {
    if (op == name) return true;
  }
  return false;
}

const std::map<std::string, std::function<lz::Tensor(const lz::Tensor&)>>& unary_ops() {
  static const std::map<std::string, std::function<lz::Tensor(const lz::Tensor&)>> ops = {
      {"neg", [](const lz::Tensor& x) { return -x; }},
      {"exp", [](const lz::Tensor& x) { return lz::exp(x); }},
      {"log", [](const lz::Tensor& x) { return lz::log(x); }},
      {"sqrt", [](const lz::Tensor& x) { return lz::sqrt(x); }},
      {"rsqrt", [](const lz::Tensor& x) { return lz::rsqrt(x); }},
      {"sin", [](const lz::Tensor& x) { return lz::sin(x); }},
      {"cos", [](const lz::Tensor& x) { return lz::cos(x); }},
      {"tanh", [](const lz::Tensor& x) { return lz::tanh(x); }},
      {"sigmoid", [](const lz::Tensor& x) { return lz::sigmoid(x); }},
      {"relu", [](const lz::Tensor& x) { return lz::relu(x); }},
      {"abs", [](const lz::Tensor& x) { return lz::abs(x); }},
      {"square", [](const lz::Tensor& x) { return lz::square(x); }},
  };
  return ops;
}

/// The case's named parameters; a missing optional one means "use the C++ default argument".
class Params {
 public:
  explicit Params(const Case& test_case) : params_(test_case.params) {}
  bool has(const std::string& name) const { return params_.count(name) != 0; }
  const std::vector<std::string>& tokens(const std::string& name) const {
    const auto found = params_.find(name);
    if (found == params_.end()) throw std::invalid_argument("missing param '" + name + "'");
    return found->second;
  }
  const std::string& single(const std::string& name) const {
    const std::vector<std::string>& values = tokens(name);
    if (values.size() != 1) throw std::invalid_argument("param '" + name + "' needs one value");
    return values[0];
  }
  std::vector<int64_t> integers(const std::string& name) const {
    std::vector<int64_t> values;
    for (const std::string& token : tokens(name)) values.push_back(parse_integer(token));
    return values;
  }
  std::vector<int> ints(const std::string& name) const {
    const std::vector<int64_t> values = integers(name);
    return {values.begin(), values.end()};
  }
  int integer(const std::string& name) const {
    return static_cast<int>(parse_integer(single(name)));
  }
  bool boolean(const std::string& name) const { return integer(name) != 0; }
  double floating(const std::string& name) const { return parse_floating(single(name)); }
  lz::Shape shape(const std::string& name) const { return parse_shape(single(name)); }
  lz::DType dtype(const std::string& name) const { return parse_dtype(single(name)); }

 private:
  const std::map<std::string, std::vector<std::string>>& params_;
};

lz::Tensor run_creation(const std::string& op, const Params& params) {
  if (op == "full") {
    if (params.has("dtype")) {
      return lz::full(params.shape("shape"), params.floating("value"), params.dtype("dtype"));
    }
    return lz::full(params.shape("shape"), params.floating("value"));
  }
  if (op == "zeros") {
    return params.has("dtype") ? lz::zeros(params.shape("shape"), params.dtype("dtype"))
                               : lz::zeros(params.shape("shape"));
  }
  if (op == "ones") {
    return params.has("dtype") ? lz::ones(params.shape("shape"), params.dtype("dtype"))
                               : lz::ones(params.shape("shape"));
  }
  if (op == "arange") {
    const double start = params.floating("start");
    const double stop = params.floating("stop");
    const double step = params.has("step") ? params.floating("step") : 1.0;
    if (params.has("dtype")) return lz::arange(start, stop, step, params.dtype("dtype"));
    if (params.has("step")) return lz::arange(start, stop, step);
    return lz::arange(start, stop);
  }
  throw std::logic_error("'" + op + "' is not a creation op");
}

lz::Tensor run_reduction(const std::string& op, const lz::Tensor& x, const Params& params) {
  const bool defaults = !params.has("axes") && !params.has("keepdims");
  const std::vector<int> axes = params.has("axes") ? params.ints("axes") : std::vector<int>{};
  const bool keepdims = params.has("keepdims") && params.boolean("keepdims");
  if (op == "sum") return defaults ? lz::sum(x) : lz::sum(x, axes, keepdims);
  if (op == "mean") return defaults ? lz::mean(x) : lz::mean(x, axes, keepdims);
  if (op == "max") return defaults ? lz::max(x) : lz::max(x, axes, keepdims);
  return defaults ? lz::min(x) : lz::min(x, axes, keepdims);
}

/// True for every op name run() dispatches.
bool is_known(const std::string& op) {
  // Space-separated, with a space at both ends, so that " name " finds whole names only.
  static const std::string kOtherOps =
      " full zeros ones arange where concatenate matmul matmul_of_transposes astype astype_member"
      " sum mean max min argmax reshape reshape_of_transpose transpose broadcast_to slice"
      " expand_dims squeeze softmax log_softmax take take_along_axis ";
  return is_binary(op) || unary_ops().count(op) != 0 ||
         kOtherOps.find(" " + op + " ") != std::string::npos;
}

/// Records the case's call; the result is read by the caller.
lz::Tensor run(const Case& test_case) {
  const std::string& op = test_case.op;
  if (!is_known(op)) throw std::invalid_argument("unknown op '" + op + "' (update the test?)");
  const Params params(test_case);
  // Built up front so that each lz::Operand below can point at a tensor that outlives it.
  std::vector<lz::Tensor> tensors;
  for (const Argument& argument : test_case.arguments) {
    tensors.push_back(argument.is_tensor ? make_tensor(argument.tensor) : lz::Tensor());
  }
  const auto& args = test_case.arguments;
  // Only binary ops and where take numbers; everything else takes `count` tensors.
  const bool takes_numbers = is_binary(op) || op == "where";
  const auto needs = [&](size_t count) {
    if (args.size() != count) {
      throw std::invalid_argument(op + " needs " + std::to_string(count) + " operands");
    }
    for (const Argument& argument : args) {
      if (!argument.is_tensor && !takes_numbers) {
        throw std::invalid_argument(op + " takes tensors only");
      }
    }
  };

  if (op == "full" || op == "zeros" || op == "ones" || op == "arange") {
    needs(0);
    return run_creation(op, params);
  }
  if (is_binary(op)) {
    needs(2);
    if (args[0].is_tensor && args[1].is_tensor) return binary(op, tensors[0], tensors[1]);
    if (args[0].is_tensor) {
      return with_number(args[1], [&](auto b) { return binary(op, tensors[0], b); });
    }
    if (args[1].is_tensor) {
      return with_number(args[0], [&](auto a) { return binary(op, a, tensors[1]); });
    }
    throw std::invalid_argument(op + " needs at least one tensor");
  }
  if (const auto unary = unary_ops().find(op); unary != unary_ops().end()) {
    needs(1);
    return unary->second(tensors[0]);
  }
  if (op == "where") {
    needs(3);
    const auto operand = [&](size_t i) -> lz::Operand {
      if (args[i].is_tensor) return lz::Operand(tensors[i]);
      if (args[i].scalar_kind == "bool") return lz::Operand(args[i].scalar_integer != 0);
      if (args[i].scalar_kind == "int") return lz::Operand(args[i].scalar_integer);
      return lz::Operand(args[i].scalar_floating);
    };
    return lz::where(tensors[0], operand(1), operand(2));
  }
  if (op == "concatenate") {
    needs(args.size());
    return params.has("axis") ? lz::concatenate(tensors, params.integer("axis"))
                              : lz::concatenate(tensors);
  }
  if (op == "matmul") {
    needs(2);
    return lz::matmul(tensors[0], tensors[1]);
  }
  if (op == "take") {
    needs(2);
    return params.has("axis") ? lz::take(tensors[0], tensors[1], params.integer("axis"))
                              : lz::take(tensors[0], tensors[1]);
  }
  if (op == "take_along_axis") {
    needs(2);
    return lz::take_along_axis(tensors[0], tensors[1], params.integer("axis"));
  }
  if (op == "matmul_of_transposes") {
    needs(2);
    return lz::matmul(lz::transpose(tensors[0]), lz::transpose(tensors[1]));
  }

  needs(1);
  const lz::Tensor& x = tensors[0];
  if (op == "astype") return lz::astype(x, params.dtype("dtype"));
  if (op == "astype_member") return x.astype(params.dtype("dtype"));
  if (op == "sum" || op == "mean" || op == "max" || op == "min") {
    return run_reduction(op, x, params);
  }
  if (op == "argmax") {
    return params.has("keepdims")
               ? lz::argmax(x, params.integer("axis"), params.boolean("keepdims"))
               : lz::argmax(x, params.integer("axis"));
  }
  if (op == "reshape") return lz::reshape(x, params.shape("shape"));
  // A reshape of a non-contiguous view: the values must follow the transposed order.
  if (op == "reshape_of_transpose") return lz::reshape(lz::transpose(x), params.shape("shape"));
  if (op == "transpose") {
    return params.has("perm") ? lz::transpose(x, params.ints("perm")) : lz::transpose(x);
  }
  if (op == "broadcast_to") return lz::broadcast_to(x, params.shape("shape"));
  if (op == "slice") {
    if (params.has("step")) {
      return lz::slice(x, params.integers("start"), params.integers("stop"),
                       params.integers("step"));
    }
    return lz::slice(x, params.integers("start"), params.integers("stop"));
  }
  if (op == "expand_dims") return lz::expand_dims(x, params.integer("axis"));
  if (op == "squeeze") {
    return params.has("axes") ? lz::squeeze(x, params.ints("axes")) : lz::squeeze(x);
  }
  if (op == "softmax") {
    return params.has("axis") ? lz::softmax(x, params.integer("axis")) : lz::softmax(x);
  }
  if (op == "log_softmax") {
    return params.has("axis") ? lz::log_softmax(x, params.integer("axis")) : lz::log_softmax(x);
  }
  throw std::logic_error("'" + op + "' is listed in is_known but not dispatched");
}

// ---- Comparing ----------------------------------------------------------------------------------

/// "add(float32 (3,4), float32 (4)) axes=[0] keepdims=[1]": what the case calls, for messages.
std::string describe(const Case& test_case) {
  std::ostringstream out;
  out << test_case.op << '(';
  for (size_t i = 0; i < test_case.arguments.size(); ++i) {
    const Argument& argument = test_case.arguments[i];
    out << (i ? ", " : "");
    if (argument.is_tensor) {
      out << lz::dtype_name(argument.tensor.dtype) << ' '
          << lz::shape_string(argument.tensor.shape);
    } else if (argument.scalar_kind == "float") {
      out << "float " << argument.scalar_floating;
    } else {
      out << argument.scalar_kind << ' ' << argument.scalar_integer;
    }
  }
  out << ')';
  for (const auto& [name, tokens] : test_case.params) {
    out << ' ' << name << "=[";
    for (size_t i = 0; i < tokens.size(); ++i) out << (i ? "," : "") << tokens[i];
    out << ']';
  }
  return out.str();
}

/// "(1,2)": the position of flat index `flat` in a row-major tensor of `shape`.
std::string position(int64_t flat, const lz::Shape& shape) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {  // only called for an element, so no dim is 0
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  std::ostringstream out;
  out << '(';
  for (size_t d = 0; d < index.size(); ++d) out << (d ? "," : "") << index[d];
  out << ')';
  return out.str();
}

struct Tolerance {
  double rtol;
  double atol;
};

bool close(double expected, double actual, Tolerance tolerance) {
  if (std::isnan(expected) || std::isnan(actual)) return std::isnan(expected) && std::isnan(actual);
  if (std::isinf(expected) || std::isinf(actual)) return expected == actual;
  return std::abs(actual - expected) <= tolerance.atol + tolerance.rtol * std::abs(expected);
}

/// Compares element by element; lists the first mismatches (index, position, expected, actual).
template <class T>
void expect_values(const Case& test_case, const std::vector<T>& actual) {
  const TensorData& expected = test_case.expected;
  const bool floating = lz::is_floating(expected.dtype);
  const Tolerance tolerance =
      expected.dtype == lz::float32 ? Tolerance{1e-5, 1e-6} : Tolerance{1e-12, 1e-12};
  const size_t count = floating ? expected.floats.size() : expected.integers.size();
  ASSERT_EQ(actual.size(), count) << "case " << test_case.name << ": element count";
  constexpr int kMaxListed = 10;
  int mismatches = 0;
  std::ostringstream report;
  report.precision(17);
  for (size_t i = 0; i < count; ++i) {
    const bool equal = floating
                           ? close(expected.floats[i], static_cast<double>(actual[i]), tolerance)
                           : expected.integers[i] == static_cast<int64_t>(actual[i]);
    if (equal) continue;
    if (++mismatches > kMaxListed) continue;
    report << "\n  index " << i << ' ' << position(static_cast<int64_t>(i), expected.shape)
           << ": expected ";
    if (floating)
      report << expected.floats[i];
    else
      report << expected.integers[i];
    report << ", actual " << +actual[i];
  }
  if (mismatches > 0) {
    std::ostringstream tolerance_text;
    if (floating)
      tolerance_text << "rtol " << tolerance.rtol << ", atol " << tolerance.atol;
    else
      tolerance_text << "exact";
    ADD_FAILURE() << "case " << test_case.name << " (" << kDataFile << " line " << test_case.line
                  << "): " << describe(test_case) << "\n"
                  << mismatches << " of " << count << " elements differ (" << tolerance_text.str()
                  << "):" << report.str() << (mismatches > kMaxListed ? "\n  ..." : "");
  }
}

void expect_result(const Case& test_case, const lz::Tensor& actual) {
  const TensorData& expected = test_case.expected;
  const std::string where = "case " + test_case.name + ": " + describe(test_case);
  EXPECT_EQ(lz::shape_string(actual.shape()), lz::shape_string(expected.shape)) << where;
  ASSERT_EQ(std::string(lz::dtype_name(actual.dtype())), lz::dtype_name(expected.dtype)) << where;
  if (actual.shape() != expected.shape) return;
  switch (expected.dtype) {
    case lz::DType::Float32: return expect_values(test_case, actual.to_vector<float>());
    case lz::DType::Float64: return expect_values(test_case, actual.to_vector<double>());
    case lz::DType::Int32: return expect_values(test_case, actual.to_vector<int32_t>());
    case lz::DType::Int64: return expect_values(test_case, actual.to_vector<int64_t>());
    case lz::DType::Bool: return expect_values(test_case, actual.to_vector<bool>());
  }
}

// ---- The tests ----------------------------------------------------------------------------------

/// The test parameter: a case in all_cases(), printed by name.
struct CaseRef {
  const Case* test_case;
};

void PrintTo(const CaseRef& ref, std::ostream* out) { *out << ref.test_case->name; }

std::vector<CaseRef> case_refs() {
  std::vector<CaseRef> refs;
  for (const Case& test_case : all_cases()) refs.push_back({&test_case});
  return refs;
}

class NumpyExpectationTest : public ::testing::TestWithParam<CaseRef> {};

TEST_P(NumpyExpectationTest, MatchesNumpy) {
  const Case& test_case = *GetParam().test_case;
  ASSERT_TRUE(test_case.load_error.empty())
      << "cannot read the numpy expectations: " << test_case.load_error;
  lz::Tensor result;
  try {
    result = run(test_case);
    expect_result(test_case, result);
  } catch (const std::exception& error) {
    FAIL() << "case " << test_case.name << " (" << kDataFile << " line " << test_case.line
           << "): " << describe(test_case) << "\nthrew: " << error.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Numpy, NumpyExpectationTest, ::testing::ValuesIn(case_refs()),
                         [](const ::testing::TestParamInfo<CaseRef>& info) {
                           return info.param.test_case->name;
                         });

// The parser itself: a file that reads but whose values would be misparsed must fail loudly.
TEST(NumpyExpectationsFileTest, ParsesEveryTokenKind) {
  std::istringstream in(
      "# comment\n"
      "cases 1\n"
      "case example\n"
      "op where\n"
      "tensor bool 2 1 0\n"
      "scalar int -9223372036854775807\n"
      "scalar float -inf\n"
      "param axes\n"
      "param shape ()\n"
      "expect float32 1x2 0.10000000149011612 nan\n"
      "end\n");
  const std::vector<Case> cases = parse_cases(in);
  ASSERT_EQ(cases.size(), 1u);
  const Case& parsed = cases[0];
  EXPECT_EQ(parsed.name, "example");
  ASSERT_EQ(parsed.arguments.size(), 3u);
  EXPECT_EQ(parsed.arguments[0].tensor.integers, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(parsed.arguments[1].scalar_integer, -9223372036854775807);
  EXPECT_TRUE(std::isinf(parsed.arguments[2].scalar_floating));
  EXPECT_TRUE(parsed.params.at("axes").empty());
  EXPECT_EQ(parse_shape(parsed.params.at("shape")[0]), lz::Shape{});
  EXPECT_EQ(parsed.expected.shape, (lz::Shape{1, 2}));
  EXPECT_EQ(static_cast<float>(parsed.expected.floats[0]), 0.1f) << "float32 values parse exactly";
  EXPECT_TRUE(std::isnan(parsed.expected.floats[1]));
}

TEST(NumpyExpectationsFileTest, RejectsWrongValueCountsAndTruncation) {
  std::istringstream wrong_count("cases 1\ncase a\nop exp\nexpect float32 3 1 2\nend\n");
  EXPECT_THROW(parse_cases(wrong_count), ParseError);
  std::istringstream truncated("cases 2\ncase a\nop exp\nexpect float32 () 1\nend\n");
  EXPECT_THROW(parse_cases(truncated), ParseError);
}

TEST(NumpyExpectationsFileTest, CheckedInFileLoads) {
  const std::vector<Case>& cases = all_cases();
  ASSERT_FALSE(cases.empty());
  EXPECT_TRUE(cases[0].load_error.empty()) << cases[0].load_error;
  EXPECT_GT(cases.size(), 100u);
}

}  // namespace
