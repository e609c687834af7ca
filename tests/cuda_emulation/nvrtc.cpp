// The fake libnvrtc.so.13: the NVRTC entry points lazuli resolves (codegen/cuda/nvrtc.cpp), with
// nvrtc.h's signatures. A program compiles with the host C++ compiler into a shared object,
// against the host emulation of CUDA (tests/codegen/cuda_host_emulation.h), with a thread
// function and a parameter layout for each __global__ function (kernel_entry.h); its "cubin"
// carries the shared object (kernel_image.h). A translation unit compiled once is not compiled
// again in the process.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <unordered_set>
#include <vector>

#include "tests/cuda_emulation/driver.h"
#include "tests/cuda_emulation/emulated_nvrtc.h"
#include "tests/cuda_emulation/kernel_image.h"
#include "tests/cuda_emulation/scratch_directory.h"

namespace lz::cuda_emulation {
namespace {

using NvrtcResult = int;  // nvrtc.h's nvrtcResult, an int
constexpr NvrtcResult kNvrtcSuccess = 0;
constexpr NvrtcResult kNvrtcOutOfMemory = 1;
constexpr NvrtcResult kNvrtcInvalidInput = 3;
constexpr NvrtcResult kNvrtcInvalidProgram = 4;
constexpr NvrtcResult kNvrtcInvalidOption = 5;
constexpr NvrtcResult kNvrtcCompilation = 6;

constexpr const char* kResultNames[] = {"NVRTC_SUCCESS",
                                        "NVRTC_ERROR_OUT_OF_MEMORY",
                                        "NVRTC_ERROR_PROGRAM_CREATION_FAILURE",
                                        "NVRTC_ERROR_INVALID_INPUT",
                                        "NVRTC_ERROR_INVALID_PROGRAM",
                                        "NVRTC_ERROR_INVALID_OPTION",
                                        "NVRTC_ERROR_COMPILATION",
                                        "NVRTC_ERROR_BUILTIN_OPERATION_FAILURE",
                                        "NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION",
                                        "NVRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION",
                                        "NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID",
                                        "NVRTC_ERROR_INTERNAL_ERROR"};

/// The real architectures it "compiles" for (any: the code runs on the host).
constexpr int kArchitectures[] = {75, 80, 86, 87, 89, 90, 100, 120};

struct Program {
  std::string source;
  std::string name;
  std::vector<std::pair<std::string, std::string>> headers;  // include name, text
  std::string log;
  std::vector<char> image;  // empty until compiled
  bool virtual_target = false;
};

struct Programs {
  std::mutex mutex;
  std::unordered_set<Program*> live;
};

Programs& programs() {
  static Programs* const registry = new Programs();
  return *registry;
}

Program* find_program(void* handle) {
  std::lock_guard lock(programs().mutex);
  auto* program = static_cast<Program*>(handle);
  return programs().live.contains(program) ? program : nullptr;
}

std::string quoted(const std::string& text) {
  std::string result = "'";
  for (const char c : text) result += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return result + "'";
}

/// `source` with its comments, string literals and character literals blanked out, so that
/// only code is searched.
std::string code_only(const std::string& source) {
  std::string code = source;
  for (size_t i = 0; i < code.size(); ++i) {
    if (code.compare(i, 2, "//") == 0) {
      while (i < code.size() && code[i] != '\n') code[i++] = ' ';
    } else if (code.compare(i, 2, "/*") == 0) {
      const size_t end = std::min(code.find("*/", i + 2), code.size() - 2) + 2;
      for (; i < end; ++i) code[i] = code[i] == '\n' ? '\n' : ' ';
      --i;
    } else if (code[i] == '"' || code[i] == '\'') {
      const char quote = code[i];
      for (code[i++] = ' '; i < code.size() && code[i] != quote; ++i) {
        if (code[i] == '\\' && i + 1 < code.size()) code[i++] = ' ';
        code[i] = ' ';
      }
      if (i < code.size()) code[i] = ' ';
    }
  }
  return code;
}

bool is_identifier_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/// The identifier ending just before `end` (spaces skipped), or "".
std::string identifier_before(const std::string& code, size_t end) {
  while (end > 0 && (code[end - 1] == ' ' || code[end - 1] == '\n' || code[end - 1] == '\t')) {
    --end;
  }
  size_t begin = end;
  while (begin > 0 && is_identifier_char(code[begin - 1])) --begin;
  return code.substr(begin, end - begin);
}

/// The names of the __global__ functions of `source`, in order: after `__global__`, the
/// identifier before the first parenthesis that does not open __launch_bounds__(...).
std::vector<std::string> entry_names(const std::string& source) {
  const std::string code = code_only(source);
  std::vector<std::string> names;
  std::set<std::string> seen;
  const std::string keyword = "__global__";
  for (size_t at = code.find(keyword); at != std::string::npos;
       at = code.find(keyword, at + keyword.size())) {
    if ((at > 0 && is_identifier_char(code[at - 1])) ||
        (at + keyword.size() < code.size() && is_identifier_char(code[at + keyword.size()]))) {
      continue;
    }
    size_t open = code.find('(', at);
    while (open != std::string::npos && identifier_before(code, open) == "__launch_bounds__") {
      int depth = 0;
      size_t close = open;
      for (; close < code.size(); ++close) {
        if (code[close] == '(') ++depth;
        if (code[close] == ')' && --depth == 0) break;
      }
      open = code.find('(', close);
    }
    if (open == std::string::npos) break;
    const std::string name = identifier_before(code, open);
    if (!name.empty() && seen.insert(name).second) names.push_back(name);
  }
  return names;
}

/// The options nvrtc.h documents that the emulation takes, with what they add to the host
/// compiler's command; false (and `why`) for any other.
bool translate_option(const std::string& option, std::string& flags, bool& virtual_target,
                      std::string& why) {
  const auto starts = [&](const char* prefix) { return option.rfind(prefix, 0) == 0; };
  if (starts("--gpu-architecture=") || starts("-arch=")) {
    const std::string target = option.substr(option.find('=') + 1);
    const size_t underscore = target.find('_');
    const std::string kind = target.substr(0, underscore);
    int number = -1;
    try {
      number = underscore == std::string::npos ? -1 : std::stoi(target.substr(underscore + 1));
    } catch (const std::exception&) {
    }
    const bool supported = std::find(std::begin(kArchitectures), std::end(kArchitectures),
                                     number) != std::end(kArchitectures);
    if ((kind != "sm" && kind != "compute") || !supported) {
      why = "invalid value for --gpu-architecture (-arch): " + target;
      return false;
    }
    virtual_target = kind == "compute";
    return true;
  }
  if (starts("-D") || starts("--define-macro=")) {
    flags += " " + quoted("-D" + option.substr(starts("-D") ? 2 : 15));
    return true;
  }
  if (starts("-I") || starts("--include-path=")) {
    flags += " " + quoted("-I" + option.substr(starts("-I") ? 2 : 15));
    return true;
  }
  if (option == "-w" || option == "--disable-warnings") {
    flags += " -w";
    return true;
  }
  // Accepted without effect: the host compiler's IEEE arithmetic (no FMA contraction, no flush
  // to zero, correctly rounded division and square roots) is what lazuli asks for.
  for (const char* accepted : {"-std=",
                               "-default-device",
                               "--device-as-default-execution-space",
                               "-lineinfo",
                               "--generate-line-info",
                               "--fmad=",
                               "-fmad=",
                               "--ftz=",
                               "-ftz=",
                               "--prec-div=",
                               "-prec-div=",
                               "--prec-sqrt=",
                               "-prec-sqrt=",
                               "--restrict",
                               "-restrict",
                               "--extra-device-vectorization",
                               "-extra-device-vectorization",
                               "-G",
                               "--device-debug",
                               "--use_fast_math",
                               "-use_fast_math",
                               "--dopt=",
                               "-dopt="}) {
    if (starts(accepted)) return true;
  }
  why = "unrecognized option " + option + " (tests/cuda_emulation/nvrtc.cpp lists those taken)";
  return false;
}

/// What one compilation made: the image, or the compiler's output when it failed.
struct Compiled {
  std::mutex mutex;  // held while compiling
  bool done = false;
  bool succeeded = false;
  std::string log;
  std::vector<char> image;
};

/// Compiles `unit` with `flags`, or finds it compiled; the result is kept for the process.
std::shared_ptr<Compiled> compile(const std::string& unit, const std::string& flags) {
  static std::mutex mutex;
  static auto* cache = new std::map<std::string, std::shared_ptr<Compiled>>();
  std::shared_ptr<Compiled> compiled;
  {
    std::lock_guard lock(mutex);
    std::shared_ptr<Compiled>& slot = (*cache)[flags + '\n' + unit];
    if (slot == nullptr) slot = std::make_shared<Compiled>();
    compiled = slot;
  }
  std::lock_guard lock(compiled->mutex);
  if (compiled->done) return compiled;
  compiled->done = true;
  const std::string stem = scratch_path("program", "").string();
  {
    std::ofstream source(stem + ".cpp");
    source << unit;
  }
  // -ffp-contract=off: NVRTC runs with --fmad=false, so nothing contracts into an FMA there.
  const std::string command =
      quoted(LAZULI_HOST_CXX_COMPILER) + " -O1 -fPIC -shared -std=c++20 -ffp-contract=off " +
      LAZULI_EMULATION_KERNEL_FLAGS + " -I" + quoted(LAZULI_SOURCE_DIR) + flags + " -o " +
      quoted(stem + ".so") + " " + quoted(stem + ".cpp") + " > " + quoted(stem + ".log") + " 2>&1";
  const int status = std::system(command.c_str());
  std::stringstream log;
  log << std::ifstream(stem + ".log").rdbuf();
  compiled->log = log.str();
  if (status == 0) {
    std::stringstream library;
    library << std::ifstream(stem + ".so", std::ios::binary).rdbuf();
    compiled->image = encode_image(library.str());
    compiled->succeeded = true;
  } else if (compiled->log.empty()) {
    compiled->log = "the host compiler could not be run: " + command;
  }
  for (const char* extension : {".cpp", ".so", ".log"}) std::remove((stem + extension).c_str());
  return compiled;
}

}  // namespace
}  // namespace lz::cuda_emulation

using namespace lz::cuda_emulation;  // NOLINT: the entry points below are C functions

using NvrtcProgram = void*;  // nvrtc.h's nvrtcProgram, a pointer to an opaque struct

LZ_EMULATION_EXPORT const char* nvrtcGetErrorString(NvrtcResult result) {
  if (result < 0 || result >= static_cast<int>(std::size(kResultNames))) {
    return "NVRTC_ERROR unknown";
  }
  return kResultNames[result];
}

LZ_EMULATION_EXPORT NvrtcResult nvrtcVersion(int* major, int* minor) {
  if (major == nullptr || minor == nullptr) return kNvrtcInvalidInput;
  *major = lz::cuda_emulation::kNvrtcVersionMajor;
  *minor = lz::cuda_emulation::kNvrtcVersionMinor;
  return kNvrtcSuccess;
}

LZ_EMULATION_EXPORT NvrtcResult nvrtcGetNumSupportedArchs(int* count) {
  if (count == nullptr) return kNvrtcInvalidInput;
  *count = static_cast<int>(std::size(kArchitectures));
  return kNvrtcSuccess;
}

LZ_EMULATION_EXPORT NvrtcResult nvrtcGetSupportedArchs(int* architectures) {
  if (architectures == nullptr) return kNvrtcInvalidInput;
  std::copy(std::begin(kArchitectures), std::end(kArchitectures), architectures);
  return kNvrtcSuccess;
}

LZ_EMULATION_EXPORT NvrtcResult nvrtcCreateProgram(NvrtcProgram* handle, const char* source,
                                                   const char* name, int header_count,
                                                   const char* const* headers,
                                                   const char* const* include_names) {
  if (handle == nullptr || source == nullptr || header_count < 0 ||
      (header_count > 0 && (headers == nullptr || include_names == nullptr))) {
    return kNvrtcInvalidInput;
  }
  auto program = std::make_unique<Program>();
  program->source = source;
  program->name = name != nullptr ? name : "default_program";
  for (int h = 0; h < header_count; ++h) {
    if (headers[h] == nullptr || include_names[h] == nullptr) return kNvrtcInvalidInput;
    program->headers.emplace_back(include_names[h], headers[h]);
  }
  std::lock_guard lock(programs().mutex);
  programs().live.insert(program.get());
  *handle = program.release();
  return kNvrtcSuccess;
}

LZ_EMULATION_EXPORT NvrtcResult nvrtcDestroyProgram(NvrtcProgram* handle) {
  if (handle == nullptr) return kNvrtcInvalidInput;
  {
    std::lock_guard lock(programs().mutex);
    if (programs().live.erase(static_cast<Program*>(*handle)) == 0) return kNvrtcInvalidProgram;
  }
  delete static_cast<Program*>(*handle);
  *handle = nullptr;
  return kNvrtcSuccess;
}

LZ_EMULATION_EXPORT NvrtcResult nvrtcCompileProgram(NvrtcProgram handle, int option_count,
                                                    const char* const* options) {
  Program* program = find_program(handle);
  if (program == nullptr) return kNvrtcInvalidProgram;
  if (option_count < 0 || (option_count > 0 && options == nullptr)) return kNvrtcInvalidInput;
  std::string flags;
  bool virtual_target = false;
  for (int o = 0; o < option_count; ++o) {
    std::string why;
    if (options[o] == nullptr) return kNvrtcInvalidInput;
    if (!translate_option(options[o], flags, virtual_target, why)) {
      program->log = "nvrtc: error: " + why + "\n";
      return kNvrtcInvalidOption;
    }
  }
  try {
    if (!program->headers.empty()) {
      // Headers given by name become files of a directory searched first.
      const std::filesystem::path directory = scratch_path("headers", "");
      for (const auto& [include_name, text] : program->headers) {
        const std::filesystem::path path = directory / include_name;
        std::filesystem::create_directories(path.parent_path());
        std::ofstream(path) << text;
      }
      flags = " -I" + quoted(directory.string()) + flags;
    }
    std::string unit =
        "#define LZ_CUDA_EMULATION_KERNELS\n"
        "#include \"tests/codegen/cuda_host_emulation.h\"\n"
        "#include \"tests/cuda_emulation/kernel_entry.h\"\n"
        "#line 1 \"" +
        program->name + "\"\n" + program->source + "\n#line 1 \"lazuli emulation entries\"\n";
    for (const std::string& entry : entry_names(program->source)) {
      unit += "LZ_EMULATED_ENTRY(" + entry + ")\n";
    }
    const std::shared_ptr<Compiled> compiled = compile(unit, flags);
    program->log = compiled->log;
    if (!compiled->succeeded) return kNvrtcCompilation;
    program->image = compiled->image;
    program->virtual_target = virtual_target;
    return kNvrtcSuccess;
  } catch (const std::bad_alloc&) {
    return kNvrtcOutOfMemory;
  } catch (const std::exception& failure) {
    program->log = std::string("nvrtc: error: ") + failure.what() + "\n";
    return kNvrtcCompilation;
  }
}

LZ_EMULATION_EXPORT NvrtcResult nvrtcGetProgramLogSize(NvrtcProgram handle, size_t* size) {
  const Program* program = find_program(handle);
  if (program == nullptr) return kNvrtcInvalidProgram;
  if (size == nullptr) return kNvrtcInvalidInput;
  *size = program->log.size() + 1;
  return kNvrtcSuccess;
}

LZ_EMULATION_EXPORT NvrtcResult nvrtcGetProgramLog(NvrtcProgram handle, char* log) {
  const Program* program = find_program(handle);
  if (program == nullptr) return kNvrtcInvalidProgram;
  if (log == nullptr) return kNvrtcInvalidInput;
  std::memcpy(log, program->log.c_str(), program->log.size() + 1);
  return kNvrtcSuccess;
}

/// The cubin: the image, for a real architecture only.
LZ_EMULATION_EXPORT NvrtcResult nvrtcGetCUBINSize(NvrtcProgram handle, size_t* size) {
  const Program* program = find_program(handle);
  if (program == nullptr || program->image.empty()) return kNvrtcInvalidProgram;
  if (size == nullptr) return kNvrtcInvalidInput;
  *size = program->virtual_target ? 0 : program->image.size();
  return kNvrtcSuccess;
}

LZ_EMULATION_EXPORT NvrtcResult nvrtcGetCUBIN(NvrtcProgram handle, char* cubin) {
  const Program* program = find_program(handle);
  if (program == nullptr || program->image.empty()) return kNvrtcInvalidProgram;
  if (cubin == nullptr) return kNvrtcInvalidInput;
  if (!program->virtual_target) std::memcpy(cubin, program->image.data(), program->image.size());
  return kNvrtcSuccess;
}

/// The PTX: the same image, which is text ending in '\0' and which the fake driver loads too.
LZ_EMULATION_EXPORT NvrtcResult nvrtcGetPTXSize(NvrtcProgram handle, size_t* size) {
  const Program* program = find_program(handle);
  if (program == nullptr || program->image.empty()) return kNvrtcInvalidProgram;
  if (size == nullptr) return kNvrtcInvalidInput;
  *size = program->image.size();
  return kNvrtcSuccess;
}

LZ_EMULATION_EXPORT NvrtcResult nvrtcGetPTX(NvrtcProgram handle, char* ptx) {
  const Program* program = find_program(handle);
  if (program == nullptr || program->image.empty()) return kNvrtcInvalidProgram;
  if (ptx == nullptr) return kNvrtcInvalidInput;
  std::memcpy(ptx, program->image.data(), program->image.size());
  return kNvrtcSuccess;
}
