// The CUDA code generator's kernels computed on the host and compared with the interpreter: each
// kernel's translation unit (the preamble and its entries) is compiled by the host C++ compiler
// against the host emulation of the CUDA features it uses (cuda_host_emulation.h), every entry
// is launched with the grid runtime/cuda/launch_config.h gives it, a block's 256 threads running
// concurrently as host threads, and every output is compared with the interpreter's values for
// the same kernel's nodes. What this proves and what it does not: codegen/README.md, cuda/.
//
// A compilation takes about a second whatever its size, so each test compiles its kernels
// together: two shared objects of many kernels with distinct names, compiled at once.
#include <gtest/gtest.h>

#include <lazuli/lazuli.h>
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include <dlfcn.h>

#include "codegen/cuda/preamble.h"
#include "codegen/cuda/source.h"
#include "ir/graph.h"
#include "memory/buffer.h"
#include "passes/pass.h"
#include "plan/fusion_plan.h"
#include "plan/kernel_signature.h"
#include "plan/unsupported_kernel.h"
#include "reference/differential_check.h"
#include "reference/interpreter.h"
#include "runtime/cuda/launch_config.h"
#include "tests/codegen/cuda_host_emulation.h"
#include "tests/codegen/cuda_test_kernels.h"
#include "tests/passes/graph_generator.h"

namespace {

using lz::codegen::cuda::CudaEntry;
using lz::codegen::cuda::CudaKernelSource;
using lz::codegen::test::data;
using lz::codegen::test::kernels_of;
using lz::codegen::test::kernels_of_graph;
using lz::codegen::test::sample;
using lz::cuda_emulation::BlockEmulator;
using lz::memory::Buffer;

static_assert(lz::cuda_emulation::kBlockThreads == lz::codegen::cuda::kCudaBlockSize);

/// The device the grids are sized for: one multiprocessor caps grid-stride entries at 32 blocks,
/// so that the blocks, emulated one after another, stay quick and the larger cases go round
/// their grid-stride loops more than once.
constexpr int kEmulatedMultiprocessors = 1;

/// Floats may differ by this many ulps: the generated code and the interpreter round the same
/// operations once each, with the same libm (the host's).
constexpr uint64_t kMaxUlps = 4;

/// The interpreter's value of every node of `kernels`, computed kernel after kernel.
std::unordered_map<const lz::ir::Node*, std::shared_ptr<Buffer>> interpret_kernels(
    const std::vector<lz::plan::Kernel>& kernels) {
  std::unordered_map<const lz::ir::Node*, std::shared_ptr<Buffer>> values;
  const auto value_of = [&](const lz::ir::Node* node) {
    return node->is_evaluated() ? node->buffer : values.at(node);
  };
  for (const lz::plan::Kernel& kernel : kernels) {
    for (const lz::ir::NodePtr& node : kernel.nodes) {
      if (node->is_evaluated()) continue;
      std::vector<const Buffer*> inputs;
      for (const lz::ir::NodePtr& input : node->inputs) {
        inputs.push_back(&value_of(input.get())->host());
      }
      values[node.get()] = lz::reference::interpret_node(*node, inputs);
    }
  }
  return values;
}

/// Device memory as the runtime allocates it: 256-byte aligned (the generated code loads groups
/// of four elements as aligned 16-byte accesses), filled with a pattern that no output should
/// keep (a kernel must write every element, and must not read its workspace before writing it).
class AlignedMemory {
 public:
  explicit AlignedMemory(int64_t bytes) {
    const size_t rounded = static_cast<size_t>((std::max<int64_t>(bytes, 1) + 255) / 256 * 256);
    data_.reset(std::aligned_alloc(256, rounded));
    std::memset(data_.get(), 0xa5, rounded);
  }
  void* data() const { return data_.get(); }

 private:
  struct Free {
    void operator()(void* memory) const { std::free(memory); }
  };
  std::unique_ptr<void, Free> data_;
};

/// How a C++ compiler spells each dtype's storage: the test's own, so that the generator's
/// parameter types are checked (a pointer of another type does not convert).
const char* storage_type(lz::DType dtype) {
  switch (dtype) {
    case lz::DType::Float32: return "float";
    case lz::DType::Float64: return "double";
    case lz::DType::Int32: return "int";
    case lz::DType::Int64: return "long long";
    case lz::DType::Bool: return "unsigned char";
  }
  return "void";
}

/// How many representable floats (float32 when `single`) lie between the two values, plus one.
uint64_t ulp_distance(double expected, double actual, bool single) {
  // Floats ordered as integers: adjacent representable values differ by 1.
  const auto ordered = [single](double value) -> int64_t {
    if (single) {
      const int32_t bits = std::bit_cast<int32_t>(static_cast<float>(value));
      return bits < 0 ? std::numeric_limits<int32_t>::min() - int64_t{bits} : bits;
    }
    const int64_t bits = std::bit_cast<int64_t>(value);
    return bits < 0 ? std::numeric_limits<int64_t>::min() - bits : bits;
  };
  const int64_t a = ordered(expected);
  const int64_t b = ordered(actual);
  // In unsigned arithmetic: the distance between large values of opposite signs exceeds int64.
  return a > b ? static_cast<uint64_t>(a) - static_cast<uint64_t>(b)
               : static_cast<uint64_t>(b) - static_cast<uint64_t>(a);
}

/// Whether an emulated element is the interpreter's: integers and bools exactly, floats within
/// kMaxUlps, or, in a kernel that sums floats (in float64 like the interpreter, but per thread,
/// per warp and per block: in another order), within the differential fuzzer's tolerance
/// (reference/differential_check.h).
template <class T>
bool element_agrees(T expected, T actual, bool sums_floats) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(expected) || std::isnan(actual))
      return std::isnan(expected) && std::isnan(actual);
    if (expected == actual) return true;
    if (std::isinf(expected) || std::isinf(actual)) return false;
    if (ulp_distance(expected, actual, std::is_same_v<T, float>) <= kMaxUlps) return true;
    const double rtol = std::is_same_v<T, float> ? 1e-5 : 1e-12;
    const double atol = std::is_same_v<T, float> ? 1e-6 : 1e-12;
    const double difference = std::abs(static_cast<double>(expected) - actual);
    return sums_floats && difference <= atol + rtol * std::abs(static_cast<double>(expected));
  } else {
    return expected == actual;
  }
}

/// All the digits of a value (integers and bools as numbers).
template <class T>
std::string value_text(T value) {
  std::ostringstream text;
  text.precision(17);
  text << +value;
  return text.str();
}

/// "" when `actual` holds the values of `expected`, else the first difference.
template <class T>
std::string compare_elements(const Buffer& expected, const void* actual_memory,
                             const lz::Shape& shape, bool sums_floats) {
  const T* wanted = expected.data_as<T>();
  const T* got = static_cast<const T*>(actual_memory);
  int64_t differing = 0;
  int64_t first = -1;
  for (int64_t i = 0; i < expected.size(); ++i) {
    if (element_agrees(wanted[i], got[i], sums_floats)) continue;
    if (first < 0) first = i;
    ++differing;
  }
  if (differing == 0) return "";
  std::vector<int64_t> index(shape.size());
  int64_t rest = first;
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = rest % shape[d];
    rest /= shape[d];
  }
  std::string index_text;
  for (int64_t i : index) index_text += (index_text.empty() ? "" : ",") + std::to_string(i);
  return std::to_string(differing) + " of " + std::to_string(expected.size()) +
         " elements differ; first at [" + index_text + "] (element " + std::to_string(first) +
         "): interpreter " + value_text(wanted[first]) + ", emulated " + value_text(got[first]);
}

std::string compare(const Buffer& expected, const void* actual, const lz::Shape& shape,
                    bool sums_floats) {
  switch (expected.dtype()) {
    case lz::DType::Float32: return compare_elements<float>(expected, actual, shape, sums_floats);
    case lz::DType::Float64: return compare_elements<double>(expected, actual, shape, sums_floats);
    case lz::DType::Int32: return compare_elements<int32_t>(expected, actual, shape, sums_floats);
    case lz::DType::Int64: return compare_elements<int64_t>(expected, actual, shape, sums_floats);
    case lz::DType::Bool: return compare_elements<uint8_t>(expected, actual, shape, sums_floats);
  }
  return "unknown dtype";
}

/// Whether `kernel` sums floats, which the generated code does in another order.
bool sums_floats(const lz::plan::Kernel& kernel) {
  return std::any_of(kernel.nodes.begin(), kernel.nodes.end(), [](const lz::ir::NodePtr& node) {
    return node->op == lz::ir::Op::Sum && lz::is_floating(node->inputs[0]->dtype);
  });
}

/// One pool of threads for the whole binary (BlockEmulator).
BlockEmulator& block_emulator() {
  static BlockEmulator emulator;
  return emulator;
}

/// Why the host compiler cannot build the kernels, or "".
std::string host_compiler_problem() {
  const std::string command = "'" LAZULI_HOST_CXX_COMPILER "' --version > /dev/null 2>&1";
  if (std::system(command.c_str()) != 0) {
    return "the host C++ compiler " LAZULI_HOST_CXX_COMPILER " cannot be run";
  }
  return "";
}

#define SKIP_WITHOUT_HOST_COMPILER()                 \
  do {                                               \
    const std::string why = host_compiler_problem(); \
    if (!why.empty()) GTEST_SKIP() << why;           \
  } while (false)

/// A generated kernel with the interpreter's values of its inputs and outputs.
struct KernelCase {
  std::string label;
  std::string name;  // its entries' symbols start with it
  lz::plan::Kernel kernel;
  CudaKernelSource source;
  std::vector<std::shared_ptr<Buffer>> inputs;
  std::vector<std::shared_ptr<Buffer>> expected;
};

/// Kernels generated, compiled together by the host compiler, run in the emulation and compared
/// with the interpreter. The generated files stay in a temporary directory when a case fails.
class EmulationBatch {
 public:
  EmulationBatch() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "lazuli-cuda-emulation-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    directory_ = pattern;
  }
  ~EmulationBatch() {
    if (!::testing::Test::HasFailure()) std::filesystem::remove_all(directory_);
  }
  EmulationBatch(const EmulationBatch&) = delete;
  EmulationBatch& operator=(const EmulationBatch&) = delete;

  /// Generates every compilable kernel of `kernels`; `what` names them in failures.
  void add(const std::vector<lz::plan::Kernel>& kernels, const std::string& what) {
    const auto values = interpret_kernels(kernels);
    for (const lz::plan::Kernel& kernel : kernels) {
      if (!lz::codegen::cuda::is_cuda_compilable(kernel)) continue;
      KernelCase added{what, "lz_k" + std::to_string(cases_.size()), kernel, {}, {}, {}};
      try {
        added.source = lz::codegen::cuda::generate_cuda_source(kernel, added.name);
      } catch (const lz::plan::UnsupportedKernel& refused) {
        // Not run, so not compared: run_and_compare fails on it (a refusal the CPU lowering
        // shares would still leave the batch testing less than it says).
        refused_.push_back(what + ": " + refused.what());
        continue;
      } catch (const lz::Error& error) {
        ADD_FAILURE() << what << ": generation failed: " << error.what();
        continue;
      }
      const auto value_of = [&](const lz::ir::NodePtr& node) {
        return node->is_evaluated() ? node->buffer : values.at(node.get());
      };
      for (const lz::ir::NodePtr& input : kernel.inputs) added.inputs.push_back(value_of(input));
      for (const lz::ir::NodePtr& output : kernel.outputs) {
        added.expected.push_back(value_of(output));
      }
      cases_.push_back(std::move(added));
    }
  }
  void add(const std::vector<lz::Tensor>& outputs, const std::string& what) {
    add(kernels_of(outputs), what);
  }

  int kernels() const { return static_cast<int>(cases_.size()); }
  /// How many entries of each kind ran (launched with at least one block).
  int launched(CudaEntry::Kind kind) const { return launched_[static_cast<int>(kind)]; }

  /// Compiles the batch into two shared objects at once, then runs every kernel and compares.
  /// Fails when the generator refused a kernel that add() was given.
  void run_and_compare() {
    for (const std::string& refused : refused_) {
      ADD_FAILURE() << "the CUDA generator refused a kernel, which the batch cannot compare: "
                    << refused;
    }
    ASSERT_FALSE(cases_.empty()) << "no kernel to run";
    constexpr size_t kParts = 2;
    const size_t per_part = (cases_.size() + kParts - 1) / kParts;
    std::vector<std::pair<size_t, size_t>> parts;
    for (size_t begin = 0; begin < cases_.size(); begin += per_part) {
      parts.emplace_back(begin, std::min(begin + per_part, cases_.size()));
    }
    std::vector<std::future<std::string>> compiled;
    for (size_t p = 0; p < parts.size(); ++p) {
      compiled.push_back(std::async(std::launch::async, [this, p, &parts] {
        return compile_part(p, parts[p].first, parts[p].second);
      }));
    }
    for (size_t p = 0; p < parts.size(); ++p) {
      const std::string failure = compiled[p].get();
      if (!failure.empty()) {
        ADD_FAILURE() << failure;
        continue;
      }
      const std::string library = part_path(p, ".so");
      void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (handle == nullptr) {
        ADD_FAILURE() << "dlopen " << library << ": " << dlerror();
        continue;
      }
      for (size_t k = parts[p].first; k < parts[p].second; ++k) {
        const std::string failures = run_case(handle, cases_[k]);
        EXPECT_TRUE(failures.empty()) << failures << "  source: " << part_path(p, ".cpp");
      }
      dlclose(handle);
    }
  }

 private:
  std::string part_path(size_t part, const char* extension) const {
    return (directory_ / ("kernels" + std::to_string(part) + extension)).string();
  }

  /// The function running one thread of `entry` (EntryThread): casts the buffers to the ABI's
  /// parameter types and calls the entry.
  static std::string thread_function(const KernelCase& c, const CudaEntry& entry) {
    std::string arguments;
    const auto argument = [&](const std::string& text) {
      arguments += (arguments.empty() ? "" : ", ") + text;
    };
    size_t buffer = 0;
    for (const lz::ir::NodePtr& input : c.kernel.inputs) {
      argument("static_cast<const " + std::string(storage_type(input->dtype)) +
               "*>(arguments->buffers[" + std::to_string(buffer++) + "])");
    }
    for (const lz::ir::NodePtr& output : c.kernel.outputs) {
      argument("static_cast<" + std::string(storage_type(output->dtype)) +
               "*>(arguments->buffers[" + std::to_string(buffer++) + "])");
    }
    if (entry.uses_workspace)
      argument("reinterpret_cast<unsigned long long*>(arguments->workspace)");
    argument("arguments->count");
    const size_t scalars =
        lz::plan::kernel_scalars(c.kernel, lz::plan::exact_sizes(c.kernel)).size();
    for (size_t s = 0; s < scalars; ++s) argument("arguments->scalars[" + std::to_string(s) + "]");
    return "extern \"C\" void " + entry.symbol +
           "_thread(const lz::cuda_emulation::ThreadState* thread, "
           "const lz::cuda_emulation::EntryArguments* arguments) {\n"
           "  const lz::cuda_emulation::ThreadScope scope(*thread);\n  " +
           entry.symbol + "(" + arguments + ");\n}\n";
  }

  /// Writes and compiles kernels [begin, end) as part `part`; returns what went wrong.
  std::string compile_part(size_t part, size_t begin, size_t end) const {
    const std::string source_path = part_path(part, ".cpp");
    {
      std::ofstream source(source_path);
      source << "#define LZ_CUDA_EMULATION_KERNELS\n"
             << "#include \"tests/codegen/cuda_host_emulation.h\"\n\n"
             << lz::codegen::cuda::device_preamble();
      for (size_t k = begin; k < end; ++k) {
        source << "\n// " << cases_[k].label << "\n" << cases_[k].source.definitions;
        for (const CudaEntry& entry : cases_[k].source.entries) {
          source << thread_function(cases_[k], entry);
        }
      }
    }
    const std::string log = part_path(part, ".log");
    // -ffp-contract=off: NVRTC runs with --fmad=false, so nothing contracts into an FMA there.
    const std::string command = "'" LAZULI_HOST_CXX_COMPILER
                                "' -O1 -fPIC -shared -std=c++20 -ffp-contract=off -I'" +
                                std::string(LAZULI_SOURCE_DIR) + "' -o '" + part_path(part, ".so") +
                                "' '" + source_path + "' > '" + log + "' 2>&1";
    if (std::system(command.c_str()) == 0) return "";
    std::ifstream log_file(log);
    std::stringstream text;
    text << log_file.rdbuf();
    return "the host compiler failed on " + source_path + ":\n" + text.str().substr(0, 8000);
  }

  /// Runs every entry of `c` as the runtime does (runtime/cuda/kernel_runner.cpp) and compares
  /// its outputs; returns what differs.
  std::string run_case(void* library, const KernelCase& c) {
    std::vector<AlignedMemory> memory;
    std::vector<void*> buffers;
    for (const std::shared_ptr<Buffer>& input : c.inputs) {
      const Buffer& host = input->host();
      memory.emplace_back(host.bytes());
      std::memcpy(memory.back().data(), host.data(), static_cast<size_t>(host.bytes()));
      buffers.push_back(memory.back().data());
    }
    for (const lz::ir::NodePtr& output : c.kernel.outputs) {
      memory.emplace_back(output->size() * lz::dtype_size(output->dtype));
      buffers.push_back(memory.back().data());
    }
    const std::vector<uint64_t> scalars =
        lz::plan::kernel_scalars(c.kernel, lz::plan::exact_sizes(c.kernel));
    std::unique_ptr<AlignedMemory> workspace;
    int64_t partial_blocks = 0;
    for (const CudaEntry& entry : c.source.entries) {
      const int64_t count = entry.kind == CudaEntry::Kind::Finish ? partial_blocks
                            : entry.fixed_count >= 0
                                ? entry.fixed_count
                                : c.kernel.nodes[static_cast<size_t>(entry.range_node)]->size();
      const int64_t blocks = lz::runtime::cuda::grid_blocks(entry, count, kEmulatedMultiprocessors);
      if (entry.kind == CudaEntry::Kind::Partial) partial_blocks = blocks;
      if (blocks == 0) continue;
      if (entry.uses_workspace && workspace == nullptr) {
        const int64_t words = (1 + std::max<int64_t>(partial_blocks, 1)) * c.source.state_slots;
        workspace = std::make_unique<AlignedMemory>(words * 8);
      }
      const std::string symbol = entry.symbol + "_thread";
      const auto thread =
          reinterpret_cast<lz::cuda_emulation::EntryThread>(dlsym(library, symbol.c_str()));
      if (thread == nullptr) return c.label + ": no " + symbol + " in the shared object\n";
      lz::cuda_emulation::EntryArguments arguments;
      arguments.buffers = buffers.data();
      arguments.workspace =
          workspace != nullptr ? static_cast<uint64_t*>(workspace->data()) : nullptr;
      arguments.count = count;
      arguments.scalars = scalars.data();
      block_emulator().launch(thread, arguments, static_cast<unsigned>(blocks));
      ++launched_[static_cast<int>(entry.kind)];
    }
    std::string failures;
    for (size_t k = 0; k < c.kernel.outputs.size(); ++k) {
      const lz::ir::Node& output = *c.kernel.outputs[k];
      const std::string difference = compare(c.expected[k]->host(), buffers[c.inputs.size() + k],
                                             output.shape, sums_floats(c.kernel));
      if (difference.empty()) continue;
      failures += c.label + ": " + c.name + " output " + std::to_string(k) + " (" +
                  std::string(lz::ir::op_name(output.op)) + " " + lz::dtype_name(output.dtype) +
                  " " + lz::shape_string(output.shape) + "): " + difference + "\n";
    }
    return failures;
  }

  std::filesystem::path directory_;
  std::vector<KernelCase> cases_;
  std::vector<std::string> refused_;  // "what: why" of each kernel the generator refused
  int launched_[5] = {};
};

/// Random normal values with NaNs at every `nan_every`-th element from `first_nan`.
lz::Tensor data_with_nans(lz::Shape shape, int64_t first_nan, int64_t nan_every) {
  lz::Tensor values = lz::random_normal(shape, 17, 0, 1, lz::float64);
  std::vector<double> elements = values.to_vector<double>();
  for (int64_t i = first_nan; i < static_cast<int64_t>(elements.size()); i += nan_every) {
    elements[i] = std::nan("");
  }
  lz::Tensor result = lz::from_vector(elements, shape);
  result.wait_to_read();
  return result;
}

TEST(CudaEmulationTest, ElementwiseOpsOfEveryDtypeMatchTheInterpreter) {
  SKIP_WITHOUT_HOST_COMPILER();
  EmulationBatch batch;
  for (lz::DType dtype : {lz::float32, lz::float64, lz::int32, lz::int64}) {
    const auto a = [&] { return data({4, 33}, dtype); };
    const auto b = [&] { return data({33}, dtype); };
    const std::string name = lz::dtype_name(dtype);
    batch.add({a() + b(), a() - b(), a() * b()}, "add sub mul " + name);
    batch.add({lz::maximum(a(), b()), lz::minimum(a(), b())}, "maximum minimum " + name);
    batch.add({-a(), lz::abs(a()), lz::square(a()), lz::relu(a())}, "neg abs square relu " + name);
    batch.add({a() < b(), a() >= b(), a() == b(), a() != b(), a() > b(), a() <= b()},
              "comparisons " + name);
    batch.add({lz::where(a() > b(), a(), b())}, "where " + name);
    for (lz::DType to : lz::kAllDTypes) {
      batch.add({sample({4, 33}, dtype, 3).astype(to)},
                "astype " + name + " to " + lz::dtype_name(to));
    }
    // A flat kernel longer than one pass of its grid, with a tail of three elements.
    batch.add({data({40003}, dtype) * sample({40003}, dtype, 5) + data({40003}, dtype)},
              "flat multiply-add " + name);
    if (lz::is_integer(dtype)) {
      batch.add({lz::pow(a(), lz::minimum(lz::abs(b()), 7)), a() * 123456789 * 987654321},
                "pow and wrapping " + name);
    } else {
      const lz::Tensor x = sample({4, 33}, dtype, 7);
      batch.add({a() / b(), lz::pow(lz::abs(x), b()), x / 0.0}, "div pow " + name);
      batch.add({lz::exp(x), lz::sqrt(x), lz::rsqrt(x), lz::sin(x), lz::cos(x), lz::tanh(x),
                 lz::sigmoid(x), lz::log(lz::abs(x)), lz::log(a())},
                "unary " + name);
      batch.add({(x * 1e30).astype(lz::int32), (x * 1e30).astype(lz::int64), lz::sqrt(a())},
                "saturating casts and NaNs " + name);
    }
  }
  const lz::Tensor flags = sample({4, 33}, lz::bool_, 11);
  batch.add({lz::maximum(flags, flags > data({33}, lz::bool_)),
             lz::minimum(flags, data({4, 1}, lz::bool_))},
            "bool max/min broadcast");
  batch.add({lz::where(flags, data({4, 33}, lz::float32), 2.5)}, "bool where");
  for (lz::DType to : lz::kAllDTypes) {
    batch.add({flags.astype(to)}, std::string("astype bool to ") + lz::dtype_name(to));
  }
  batch.run_and_compare();
}

TEST(CudaEmulationTest, ReductionsOverEveryAxisMatchTheInterpreter) {
  SKIP_WITHOUT_HOST_COMPILER();
  EmulationBatch batch;
  const lz::Shape shape{3, 5, 17};
  const std::vector<std::vector<int>> every_axes{{0},    {1},    {2},       {0, 1},
                                                 {0, 2}, {1, 2}, {0, 1, 2}, {-1}};
  for (lz::DType dtype : {lz::float32, lz::float64, lz::int32, lz::int64, lz::bool_}) {
    const std::string name = lz::dtype_name(dtype);
    const lz::Tensor x = sample(shape, dtype, 23);
    for (const std::vector<int>& axes : every_axes) {
      const std::string what =
          name + " axes " + std::to_string(axes.size()) + "," + std::to_string(axes[0]);
      std::vector<lz::Tensor> results{lz::max(x, axes), lz::min(x, axes, true)};
      if (dtype != lz::bool_) results.push_back(lz::sum(x, axes));
      batch.add(results, "max min sum " + what);
    }
    for (int axis : {0, 1, 2}) {
      batch.add({lz::argmax(data(shape, dtype), axis)}, "argmax with ties " + name);
    }
    // Long rows: a block per kept position; for float32, 40 of them on a grid of 32 blocks.
    const lz::Shape rows_shape{dtype == lz::float32 ? 40 : 6, 300};
    const lz::Tensor rows =
        dtype == lz::bool_ ? data(rows_shape, dtype) : sample(rows_shape, dtype, 29);
    std::vector<lz::Tensor> results{lz::max(rows, {1}), lz::min(rows, {1}), lz::argmax(rows, 1)};
    if (dtype != lz::bool_) results.push_back(lz::sum(rows, {1}));
    batch.add(results, "long rows " + name);
    batch.add({lz::argmax(data({300, 6}, dtype), 0), lz::max(data({300, 6}, dtype), {0})},
              "long columns with ties " + name);
  }
  batch.run_and_compare();
  EXPECT_GT(batch.launched(CudaEntry::Kind::Reduction), 60);
}

TEST(CudaEmulationTest, SplitReductionsToOneValueMatchTheInterpreter) {
  SKIP_WITHOUT_HOST_COMPILER();
  EmulationBatch batch;
  // 40001 elements: 32 blocks (the grid's cap) go round the Partial loop five times.
  const int64_t n = 40001;
  for (lz::DType dtype : {lz::float32, lz::float64, lz::int32, lz::int64}) {
    // Values of a few hundred levels: the maximum is reached many times, and argmax must take
    // the first.
    const lz::Tensor x = (sample({n}, lz::float64, 41) * 50).astype(lz::int32).astype(dtype);
    batch.add({lz::sum(x), lz::max(x), lz::min(x * 2, {}, true), lz::argmax(x, 0)},
              std::string("sum max min argmax ") + lz::dtype_name(dtype));
  }
  const lz::Tensor y = lz::reshape(sample({n}, lz::float32, 43), {n, 1});
  batch.add({y - lz::mean(y)}, "centre");
  batch.add({lz::sum(y) * 2.0 + lz::max(y)}, "two results");
  batch.add({lz::max(sample({n}, lz::bool_, 47)), lz::min(sample({n}, lz::bool_, 47))}, "any all");
  batch.add({lz::softmax(lz::reshape(y, {n}), 0)}, "softmax");
  // The smallest reduction that splits.
  const lz::Tensor smallest = sample({int64_t{1} << 14}, lz::float64, 53);
  batch.add({smallest - lz::mean(smallest), lz::argmax(smallest, 0)}, "centre 2^14 elements");
  const lz::Tensor nans = data_with_nans({n}, 20000, 7000);
  batch.add({lz::max(nans), lz::min(nans), lz::argmax(nans, 0), lz::sum(nans)}, "NaNs 40001");
  batch.run_and_compare();
  EXPECT_GE(batch.launched(CudaEntry::Kind::Partial), 10);
  EXPECT_EQ(batch.launched(CudaEntry::Kind::Finish), batch.launched(CudaEntry::Kind::Partial));
  EXPECT_GE(batch.launched(CudaEntry::Kind::Broadcast), 3);
}

TEST(CudaEmulationTest, ViewsAndBroadcastingMatchTheInterpreter) {
  SKIP_WITHOUT_HOST_COMPILER();
  EmulationBatch batch;
  for (lz::DType dtype : {lz::float32, lz::int64}) {
    const std::string name = lz::dtype_name(dtype);
    const auto x = [&] { return sample({6, 8, 5}, dtype, 53); };
    batch.add({lz::transpose(x(), {2, 0, 1}) * 2 + 1}, "transpose " + name);
    batch.add({lz::slice(x(), {1, 0, 4}, {6, 8, 0}, {2, 3, -2}) + 1}, "slice " + name);
    batch.add({lz::slice(x(), {5, 7, 4}, {-7, -9, -6}, {-1, -2, -1}) * 3},
              "slice backwards " + name);
    batch.add({lz::reshape(lz::transpose(x()), {5, 48}) -
               lz::reshape(lz::sum(x(), {0, 1}, false), {5, 1})},
              "reshape of transpose minus sum " + name);
    batch.add({lz::concatenate({x(), x() * 2, lz::zeros({6, 1, 5}, dtype)}, 1) + 1},
              "concatenate " + name);
    batch.add({x() + sample({8, 1}, dtype, 59) * sample({1, 1, 5}, dtype, 61)},
              "broadcasting " + name);
  }
  batch.add({lz::broadcast_to(lz::arange(0, 5), {4, 5}) * lz::expand_dims(lz::arange(0, 4), 1)},
            "broadcast of aranges");
  batch.add({lz::sum(lz::concatenate({lz::zeros({3, 0}), lz::ones({3, 0})}, 1), {1}) + 1},
            "sum over a concatenate of empty inputs");
  batch.run_and_compare();
}

TEST(CudaEmulationTest, SoftmaxLayerNormAndNaNsMatchTheInterpreter) {
  SKIP_WITHOUT_HOST_COMPILER();
  EmulationBatch batch;
  const lz::Tensor x = sample({6, 8, 5}, lz::float32, 67);
  for (int axis : {0, 1, 2}) {
    batch.add({lz::softmax(x, axis)}, "softmax over axis " + std::to_string(axis));
  }
  for (lz::DType dtype : {lz::float32, lz::float64}) {
    const lz::Tensor rows = sample({12, 300}, dtype, 71) * 3 + 1;
    batch.add({lz::softmax(rows, 1)}, std::string("softmax of long rows ") + lz::dtype_name(dtype));
    const lz::Tensor centred = rows - lz::mean(rows, {1}, true);
    const lz::Tensor normalized =
        centred * lz::rsqrt(lz::mean(lz::square(centred), {1}, true) + 1e-5);
    batch.add({normalized * sample({300}, dtype, 73) + sample({300}, dtype, 79)},
              std::string("layer norm ") + lz::dtype_name(dtype));
  }
  const lz::Tensor nans = data_with_nans({12, 100}, 3, 250);
  batch.add({lz::max(nans, {1}), lz::min(nans, {0}), lz::argmax(nans, 1), lz::argmax(nans, 0),
             lz::relu(nans)},
            "NaNs by block and by thread");
  batch.add({lz::argmin(nans, 1), lz::argmin(nans, 0)}, "argmin with NaNs by block and by thread");
  for (lz::DType dtype : {lz::int32, lz::int64, lz::bool_, lz::float32}) {
    const lz::Tensor ties = data({12, 300}, dtype);  // many equal values: the first must win
    batch.add({lz::argmin(ties, 1), lz::argmin(ties, 0)},
              std::string("argmin of ties ") + lz::dtype_name(dtype));
  }
  const lz::Tensor nans32 = data_with_nans({12, 100}, 3, 250).astype(lz::float32);
  batch.add({lz::max(nans32, {1}), lz::argmax(nans32, 1), lz::sum(nans32, {0})}, "NaNs float32");
  batch.run_and_compare();
}

TEST(CudaEmulationTest, ChainedReductionStagesMatchTheInterpreter) {
  SKIP_WITHOUT_HOST_COMPILER();
  EmulationBatch batch;
  const auto add_one_kernel = [&](const std::vector<lz::Tensor>& outputs, const std::string& what) {
    const std::vector<lz::plan::Kernel> kernels = kernels_of(outputs);
    EXPECT_EQ(kernels.size(), 1u) << what << ": the stages did not fuse into one kernel";
    batch.add(kernels, what);
  };
  // A thread per row, and a block per row.
  for (const lz::Shape& shape : {lz::Shape{7, 12}, lz::Shape{5, 300}}) {
    const std::string size = lz::shape_string(shape);
    const lz::Tensor x = sample(shape, lz::float32, 83) * 3;
    const lz::Tensor m = lz::max(x, {1}, true);
    const lz::Tensor shifted = x - m;
    const lz::Tensor total = lz::sum(lz::exp(shifted), {1}, true);
    add_one_kernel({lz::exp(shifted) / total, m, total, shifted, x},
                   "softmax with every stage's values as outputs " + size);
    const lz::Tensor p = lz::softmax(x, 1);
    const lz::Tensor spread = lz::sum(lz::square(p - lz::mean(p, {1}, true)), {1}, true);
    add_one_kernel({p / spread + lz::argmax(p - spread, 1, true).astype(lz::float32)},
                   "three stages and an argmax " + size);
  }
  // Rows staged in shared memory: a bool mask and float32 scores, read by all three passes.
  const lz::Tensor mask = data({5, 300}, lz::bool_);
  add_one_kernel({lz::softmax(lz::where(mask, data({5, 300}, lz::float32), -1e9))},
                 "masked softmax over staged rows");
  const lz::Tensor wide = sample({4, 6, 40}, lz::float64, 89);
  add_one_kernel({lz::log_softmax(wide, 2) + lz::softmax(wide, 2)}, "log_softmax beside softmax");
  const lz::Tensor ints = sample({4, 6, 40}, lz::int32, 97);
  add_one_kernel({lz::sum(ints - lz::min(ints, {0, 2}, true), {0, 2})}, "integers over two axes");
  batch.run_and_compare();
}

TEST(CudaEmulationTest, GeneratedLeavesMatchTheInterpreter) {
  SKIP_WITHOUT_HOST_COMPILER();
  EmulationBatch batch;
  for (lz::DType dtype : {lz::float32, lz::float64, lz::int32, lz::int64}) {
    const std::string name = lz::dtype_name(dtype);
    batch.add({lz::random_uniform({1027}, 99, -3, 3, dtype) + lz::arange(-5, 1022, 1, dtype)},
              "uniform and arange " + name);
    batch.add({lz::full({5, 3}, 2.5, dtype) * data({5, 3}, dtype), lz::arange(7, -8, -2, dtype)},
              "full and a descending arange " + name);
  }
  for (lz::DType dtype : {lz::float32, lz::float64}) {
    batch.add({lz::random_normal({1029}, 5, 1, 2, dtype) * 2.0, lz::arange(0.5, 3.25, 0.25, dtype)},
              std::string("normal and fractional arange ") + lz::dtype_name(dtype));
  }
  batch.add({lz::random_uniform({333}, 7) > 0.25}, "uniform compared");
  batch.run_and_compare();
}

TEST(CudaEmulationTest, FuzzedGraphKernelsMatchTheInterpreter) {
  SKIP_WITHOUT_HOST_COMPILER();
  EmulationBatch batch;
  for (uint64_t seed = 0; seed < 20; ++seed) {
    lz::ir::Graph graph = lz::passes::test::GraphGenerator(seed).generate();
    lz::reference::fill_data_leaves(graph, seed);
    batch.add(kernels_of_graph(graph), "fuzz seed " + std::to_string(seed));
  }
  EXPECT_GT(batch.kernels(), 40);
  batch.run_and_compare();
}

}  // namespace
