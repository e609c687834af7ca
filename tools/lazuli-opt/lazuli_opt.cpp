// lazuli-opt: reads IR text, runs a pipeline of passes over it and prints the result, like LLVM's
// `opt`. With --run it also executes the graph on random inputs, once unoptimized through the
// reference interpreter and once optimized through the kernel executor, and compares the outputs.
//
//   lazuli-opt graph.lzir --passes=dce,cse,fuse --print-after=fuse
//   lazuli-opt - --run --seed=3 < graph.lzir
//
// The pass tests (tests/passes/filecheck/*.lzir) drive it through FileCheck, and the differential
// fuzzer prints failing graphs so that `lazuli-opt --run` replays them.
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
#include "memory/buffer.h"
#include "passes/pass.h"
#include "passes/pass_manager.h"
#include "reference/differential_check.h"
#include "reference/interpreter.h"
#include "runtime/kernel_executor.h"

namespace {

using lz::Error;
namespace ir = lz::ir;
namespace passes = lz::passes;
namespace memory = lz::memory;
namespace reference = lz::reference;
namespace runtime = lz::runtime;

constexpr std::string_view kUsage = R"(usage: lazuli-opt [options] [FILE | -]

Reads lazuli IR text (ir/printer.h format) from FILE, or from standard input when FILE is `-` or
missing, runs a pipeline of passes over it and prints the result.

Options:
  --passes=LIST         comma-separated passes to run, in order (default: %PIPELINE%);
                        the passes are dce, cse, simplify, fuse, schedule
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
  std::string pipeline = passes::with_analyses(passes::kDefaultPipeline);
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

/// Runs `original` through the interpreter and `context` (its optimized clone) through the
/// kernel executor and prints the comparison. Returns whether every output agrees.
bool run_and_compare(const ir::Graph& original, const passes::PassContext& context, uint64_t seed) {
  std::vector<bool> keep(original.nodes.size(), false);
  const auto position = original.index();
  for (const ir::NodePtr& output : original.outputs) keep[position.at(output.get())] = true;
  const std::vector<std::shared_ptr<memory::Buffer>> reference =
      reference::interpret(original, keep);
  const std::vector<std::shared_ptr<memory::Buffer>> optimized =
      runtime::execute(context.graph, context.fusion.get());
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
        reference::compare_buffers(reference[node_position].get(), optimized[i].get(), node.shape,
                                   reference::precision_of(node));
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
  if (options.run) reference::fill_data_leaves(parsed.graph, options.seed);

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
                  << passes::print_context(context, parsed.locations) << std::flush;
      });

  passes::PassContext context(ir::clone_graph(parsed.graph, &parsed.locations),
                              options.pass_options);
  manager.run(context);

  if (options.run) return run_and_compare(parsed.graph, context, options.seed) ? 0 : 1;
  if (!printing_after) std::cout << passes::print_context(context, parsed.locations);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options options = parse_options(argc, argv);
    if (options.help) {
      std::string usage(kUsage);
      const std::string placeholder = "%PIPELINE%";
      usage.replace(usage.find(placeholder), placeholder.size(),
                    passes::with_analyses(passes::kDefaultPipeline));
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
