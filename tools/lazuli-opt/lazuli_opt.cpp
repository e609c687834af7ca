// lazuli-opt: reads IR text, runs a pipeline of passes over it and prints the result, like LLVM's
// `opt`. With --run it also executes the graph on random inputs, once unoptimized through the
// reference interpreter and once optimized through the kernel executor, and compares the outputs.
//
//   lazuli-opt graph.lzir --passes=dce,cse,fuse --print-after=fuse
//   lazuli-opt - --run --seed=3 < graph.lzir
//
// The pass tests (tests/passes/filecheck/*.lzir) drive it through FileCheck, and the differential
// fuzzer prints failing graphs so that `lazuli-opt --run` replays them.
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "ir/clone.h"
#include "ir/graph.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "lazuli/error.h"
#include "passes/pass.h"
#include "passes/pass_manager.h"
#include "runtime/buffer.h"
#include "runtime/counter_rng.h"
#include "runtime/interpreter.h"
#include "runtime/kernel_executor.h"

namespace {

using lz::Error;
namespace ir = lz::ir;
namespace passes = lz::passes;
namespace runtime = lz::runtime;

constexpr std::string_view kUsage = R"(usage: lazuli-opt [options] [FILE | -]

Reads lazuli IR text (ir/printer.h format) from FILE, or from standard input when FILE is `-` or
missing, runs a pipeline of passes over it and prints the result.

Options:
  --passes=LIST         comma-separated passes to run, in order (default: %PIPELINE%);
                        the passes are dce, cse, simplify, fuse, schedule, memplan
  --disable=NAME        skip every pass called NAME (repeatable)
  --no-fusion           one kernel per op (as LZ_FUSION=0)
  --max-kernel-ops=N    split kernels with more ops than this
  --max-kernel-inputs=N split kernels reading more buffers than this
  --streams=N           streams the scheduler may use
  --print-after=REGEX   print the context after each pass whose whole name matches REGEX
                        (repeatable); replaces the final print
  --print-after-all     print the context after every pass; replaces the final print
  --run                 execute the graph on random inputs, unoptimized (reference interpreter)
                        and optimized (kernel executor), and compare every output; prints
                        `run: N outputs agree`, or the differences and exits with status 1;
                        replaces the final print
  --seed=N              seed of the random inputs of --run (default 0)
  --help                show this text

Every data leaf without values gets, for --run, element i of the counter-based stream
random_bits(random_bits(seed, p), i) where p is the leaf's position (%p in printed IR): floats
uniform in [-2,2), integers uniform in [-5,5), bools the parity of the 64 bits.
The graph is verified (ir/verifier.h) after every pass.
)";

struct Options {
  std::string input = "-";
  std::string pipeline{passes::kDefaultPipeline};
  std::vector<std::string> disabled;
  passes::PassOptions pass_options;
  std::vector<std::regex> print_after;
  std::vector<std::string> print_after_text;
  bool print_after_all = false;
  bool run = false;
  uint64_t seed = 0;
  bool help = false;
};

int64_t parse_integer(std::string_view option, std::string_view text) {
  const std::string value(text);
  size_t used = 0;
  long long parsed = 0;
  try {
    parsed = std::stoll(value, &used, 0);
  } catch (const std::exception&) {
    used = 0;
  }
  if (value.empty() || used != value.size()) {
    throw Error("option " + std::string(option) + " needs an integer, got '" + value + "'");
  }
  return parsed;
}

uint64_t parse_seed(std::string_view text) {
  const std::string value(text);
  size_t used = 0;
  unsigned long long parsed = 0;
  try {
    if (!value.empty() && value[0] != '-') parsed = std::stoull(value, &used, 0);
  } catch (const std::exception&) {
    used = 0;
  }
  if (value.empty() || used != value.size()) {
    throw Error("option --seed needs a non-negative integer, got '" + value + "'");
  }
  return parsed;
}

Options parse_options(int argc, char** argv) {
  Options options;
  bool have_input = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view argument = argv[i];
    const auto value_of = [&](std::string_view prefix, std::string_view* value) {
      if (!argument.starts_with(prefix)) return false;
      *value = argument.substr(prefix.size());
      return true;
    };
    std::string_view value;
    if (argument == "--help" || argument == "-h") {
      options.help = true;
    } else if (value_of("--passes=", &value)) {
      options.pipeline = value;
    } else if (value_of("--disable=", &value)) {
      options.disabled.emplace_back(value);
    } else if (argument == "--no-fusion") {
      options.pass_options.fusion = false;
    } else if (value_of("--max-kernel-ops=", &value)) {
      options.pass_options.max_kernel_ops =
          static_cast<int>(parse_integer("--max-kernel-ops", value));
    } else if (value_of("--max-kernel-inputs=", &value)) {
      options.pass_options.max_kernel_inputs =
          static_cast<int>(parse_integer("--max-kernel-inputs", value));
    } else if (value_of("--streams=", &value)) {
      options.pass_options.streams = static_cast<int>(parse_integer("--streams", value));
    } else if (value_of("--print-after=", &value)) {
      try {
        options.print_after.emplace_back(std::string(value));
      } catch (const std::regex_error& error) {
        throw Error("option --print-after: '" + std::string(value) +
                    "' is not a regular expression (" + error.what() + ")");
      }
      options.print_after_text.emplace_back(value);
    } else if (argument == "--print-after-all") {
      options.print_after_all = true;
    } else if (argument == "--run") {
      options.run = true;
    } else if (value_of("--seed=", &value)) {
      options.seed = parse_seed(value);
    } else if (argument.starts_with("-") && argument != "-") {
      throw Error("unknown option '" + std::string(argument) + "'; see lazuli-opt --help");
    } else {
      if (have_input) {
        throw Error("more than one input file ('" + options.input + "' and '" +
                    std::string(argument) + "')");
      }
      options.input = argument;
      have_input = true;
    }
  }
  return options;
}

std::string read_input(const std::string& path) {
  if (path == "-") {
    return std::string(std::istreambuf_iterator<char>(std::cin), {});
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) throw Error("cannot open '" + path + "'");
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

// ---------------------------------------------------------------------------------------------
// Random inputs. The differential fuzzer (tests/passes/differential_fuzz_test.cpp) fills its
// leaves by the same rule, so a graph it prints replays here with the same values.

template <class T>
void fill_elements(runtime::Buffer& buffer, uint64_t stream) {
  T* out = buffer.data_as<T>();
  for (int64_t i = 0; i < buffer.size(); ++i) {
    const auto counter = static_cast<uint64_t>(i);
    if constexpr (std::is_same_v<T, bool>) {
      out[i] = (std::popcount(runtime::random_bits(stream, counter)) & 1) != 0;
    } else if constexpr (std::is_floating_point_v<T>) {
      out[i] = static_cast<T>(runtime::uniform_element(stream, counter, -2.0, 2.0));
    } else {
      out[i] = static_cast<T>(std::floor(runtime::uniform_element(stream, counter, -5.0, 5.0)));
    }
  }
}

/// Gives every data leaf of `graph` without a buffer random values (see kUsage).
void fill_data_leaves(const ir::Graph& graph, uint64_t seed) {
  for (size_t position = 0; position < graph.nodes.size(); ++position) {
    ir::Node& node = *graph.nodes[position];
    if (node.op != ir::Op::Data || node.buffer != nullptr) continue;
    auto buffer = runtime::Buffer::allocate(node.dtype, node.size());
    const uint64_t stream = runtime::random_bits(seed, position);
    switch (node.dtype) {
      case lz::DType::Float32: fill_elements<float>(*buffer, stream); break;
      case lz::DType::Float64: fill_elements<double>(*buffer, stream); break;
      case lz::DType::Int32: fill_elements<int32_t>(*buffer, stream); break;
      case lz::DType::Int64: fill_elements<int64_t>(*buffer, stream); break;
      case lz::DType::Bool: fill_elements<bool>(*buffer, stream); break;
    }
    node.buffer = std::move(buffer);
  }
}

// ---------------------------------------------------------------------------------------------
// Comparing outputs.

/// Whether `optimized` matches the reference `reference` for the dtype's tolerance: f32 within
/// rtol 1e-5 / atol 1e-6, f64 within 1e-12 / 1e-12, exact otherwise; NaN matches NaN.
template <class T>
bool element_agrees(T reference, T optimized) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(reference) || std::isnan(optimized)) {
      return std::isnan(reference) && std::isnan(optimized);
    }
    if (reference == optimized) return true;  // includes equal infinities
    const double rtol = std::is_same_v<T, float> ? 1e-5 : 1e-12;
    const double atol = std::is_same_v<T, float> ? 1e-6 : 1e-12;
    const double difference = std::abs(static_cast<double>(reference) - optimized);
    return difference <= atol + rtol * std::abs(static_cast<double>(reference));
  } else {
    return reference == optimized;
  }
}

std::string index_text(int64_t flat, const lz::Shape& shape) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] == 0) continue;
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  std::string text = "[";
  for (size_t d = 0; d < index.size(); ++d) text += (d ? "," : "") + std::to_string(index[d]);
  return text + "]";
}

template <class T>
std::string value_text(T value) {
  std::ostringstream text;
  if constexpr (std::is_same_v<T, bool>) {
    text << (value ? "true" : "false");
  } else {
    text.precision(std::is_same_v<T, float> ? 9 : 17);
    text << value;
  }
  return text.str();
}

/// Compares one output; returns "" when it agrees, else what differs.
template <class T>
std::string compare_elements(const runtime::Buffer& reference, const runtime::Buffer& optimized,
                             const lz::Shape& shape) {
  const T* expected = reference.data_as<T>();
  const T* actual = optimized.data_as<T>();
  int64_t differing = 0;
  int64_t first = -1;
  for (int64_t i = 0; i < reference.size(); ++i) {
    if (element_agrees(expected[i], actual[i])) continue;
    if (first < 0) first = i;
    ++differing;
  }
  if (differing == 0) return "";
  return std::to_string(differing) + " of " + std::to_string(reference.size()) +
         " elements differ; first at " + index_text(first, shape) + ": reference " +
         value_text(expected[first]) + ", optimized " + value_text(actual[first]);
}

std::string compare_output(const ir::Node& node, const runtime::Buffer* reference,
                           const runtime::Buffer* optimized) {
  if (reference == nullptr) return "the reference produced no buffer";
  if (optimized == nullptr) return "the optimized run produced no buffer";
  if (optimized->dtype() != reference->dtype() || optimized->size() != reference->size()) {
    return std::string("the optimized buffer holds ") + std::to_string(optimized->size()) + " " +
           lz::dtype_name(optimized->dtype()) + " elements, the reference " +
           std::to_string(reference->size()) + " " + lz::dtype_name(reference->dtype());
  }
  switch (reference->dtype()) {
    case lz::DType::Float32: return compare_elements<float>(*reference, *optimized, node.shape);
    case lz::DType::Float64: return compare_elements<double>(*reference, *optimized, node.shape);
    case lz::DType::Int32: return compare_elements<int32_t>(*reference, *optimized, node.shape);
    case lz::DType::Int64: return compare_elements<int64_t>(*reference, *optimized, node.shape);
    case lz::DType::Bool: return compare_elements<bool>(*reference, *optimized, node.shape);
  }
  return "unknown dtype";
}

/// Runs `original` through the interpreter and `context` (its optimized clone) through the
/// kernel executor and prints the comparison. Returns whether every output agrees.
bool run_and_compare(const ir::Graph& original, const passes::PassContext& context, uint64_t seed) {
  std::vector<bool> keep(original.nodes.size(), false);
  const auto position = original.index();
  for (const ir::NodePtr& output : original.outputs) keep[position.at(output.get())] = true;
  const std::vector<std::shared_ptr<runtime::Buffer>> reference =
      runtime::interpret(original, keep);
  const std::vector<std::shared_ptr<runtime::Buffer>> optimized = runtime::execute(context);
  if (optimized.size() != original.outputs.size()) {
    std::cout << "run: MISMATCH: the optimized run returned " << optimized.size()
              << " outputs for the graph's " << original.outputs.size() << " (seed " << seed
              << ")\n";
    return false;
  }
  int mismatches = 0;
  for (size_t i = 0; i < original.outputs.size(); ++i) {
    const ir::Node& node = *original.outputs[i];
    const int64_t node_position = position.at(&node);
    const std::string difference =
        compare_output(node, reference[node_position].get(), optimized[i].get());
    if (difference.empty()) continue;
    ++mismatches;
    std::cout << "run: MISMATCH in output " << i << " (%" << node_position << " = "
              << ir::op_name(node.op) << " : " << ir::type_text(node.dtype, node.shape)
              << "): " << difference << "\n";
  }
  if (mismatches > 0) {
    std::cout << "run: " << mismatches << " of " << original.outputs.size()
              << " outputs differ (seed " << seed << ")\n";
    return false;
  }
  std::cout << "run: " << original.outputs.size() << " outputs agree (seed " << seed << ")\n";
  return true;
}

bool should_print_after(const Options& options, std::string_view pass) {
  if (options.print_after_all) return true;
  const std::string name(pass);
  for (const std::regex& pattern : options.print_after) {
    if (std::regex_match(name, pattern)) return true;
  }
  return false;
}

int run_tool(const Options& options) {
  const std::string text = read_input(options.input);
  ir::ParsedGraph parsed = ir::parse_graph(text);
  // Leaves get their values before cloning, so that the clone shares them.
  if (options.run) fill_data_leaves(parsed.graph, options.seed);

  passes::PassManager manager(options.pipeline);
  for (const std::string& name : options.disabled) manager.disable(name);
  const bool printing_after = options.print_after_all || !options.print_after.empty();
  manager.set_observer(
      [&](int position, std::string_view pass, const passes::PassContext& context) {
        if (position == 0) return;
        try {
          ir::verify(context.graph);
        } catch (const Error& error) {
          throw Error("after pass '" + std::string(pass) + "' (" + std::to_string(position) +
                      "): " + error.what());
        }
        if (!should_print_after(options, pass)) return;
        std::cout << "// -----// IR after " << pass << " (" << position << ") //----- //\n"
                  << passes::print_context(context) << std::flush;
      });

  passes::PassContext context(ir::clone_graph(parsed.graph), options.pass_options);
  manager.run(context);

  if (options.run) return run_and_compare(parsed.graph, context, options.seed) ? 0 : 1;
  if (!printing_after) std::cout << passes::print_context(context);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options options = parse_options(argc, argv);
    if (options.help) {
      std::string usage(kUsage);
      const std::string placeholder = "%PIPELINE%";
      usage.replace(usage.find(placeholder), placeholder.size(), passes::kDefaultPipeline);
      std::cout << usage;
      return 0;
    }
    return run_tool(options);
  } catch (const Error& error) {
    std::cout << std::flush;
    std::cerr << "lazuli-opt: " << error.what() << "\n";
    return 1;
  } catch (const std::exception& error) {
    std::cout << std::flush;
    std::cerr << "lazuli-opt: internal error: " << error.what() << "\n";
    return 2;
  }
}
