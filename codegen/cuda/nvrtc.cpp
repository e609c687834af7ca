#include "codegen/cuda/nvrtc.h"

#include <algorithm>
#include <cstdio>

#include "lazuli/error.h"
#include "support/shared_library.h"

namespace lz::codegen::cuda {
namespace {

// The few NVRTC entry points used, declared from the documented C API (nvrtc.h) so that no CUDA
// header is needed to build. Every function returns nvrtcResult, an int where 0 is success.
using Program = struct OpaqueNvrtcProgram*;
using GetErrorString = const char* (*)(int result);
using Version = int (*)(int* major, int* minor);
using GetNumSupportedArchs = int (*)(int* count);
using GetSupportedArchs = int (*)(int* archs);
using CreateProgram = int (*)(Program* program, const char* source, const char* name,
                              int header_count, const char* const* headers,
                              const char* const* include_names);
using DestroyProgram = int (*)(Program* program);
using CompileProgram = int (*)(Program program, int option_count, const char* const* options);
using GetSize = int (*)(Program program, size_t* size);
using GetBytes = int (*)(Program program, char* bytes);

struct Nvrtc {
  std::string failure;  // empty when loaded
  std::string library;
  int major = 0;
  int minor = 0;
  std::vector<int> archs;  // supported real architectures, as 90 for sm_90
  GetErrorString get_error_string = nullptr;
  CreateProgram create_program = nullptr;
  DestroyProgram destroy_program = nullptr;
  CompileProgram compile_program = nullptr;
  GetSize get_log_size = nullptr;
  GetBytes get_log = nullptr;
  GetSize get_cubin_size = nullptr;
  GetBytes get_cubin = nullptr;
  GetSize get_ptx_size = nullptr;
  GetBytes get_ptx = nullptr;
};

Nvrtc load() {
  Nvrtc nvrtc;
  void* handle = support::load_library(
      {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so", "/usr/local/cuda/lib64/libnvrtc.so.13"},
      nvrtc.failure, &nvrtc.library);
  if (handle == nullptr) return nvrtc;
  // The library stays loaded for the life of the process: compiled programs may be in flight.
  Version version = nullptr;
  GetNumSupportedArchs get_arch_count = nullptr;
  GetSupportedArchs get_archs = nullptr;
  std::string& failure = nvrtc.failure;
  const auto resolve = [&](const char* symbol, auto& entry) {
    return support::resolve_symbol(handle, "libnvrtc", symbol, entry, failure);
  };
  if (!resolve("nvrtcGetErrorString", nvrtc.get_error_string) ||
      !resolve("nvrtcVersion", version) || !resolve("nvrtcGetNumSupportedArchs", get_arch_count) ||
      !resolve("nvrtcGetSupportedArchs", get_archs) ||
      !resolve("nvrtcCreateProgram", nvrtc.create_program) ||
      !resolve("nvrtcDestroyProgram", nvrtc.destroy_program) ||
      !resolve("nvrtcCompileProgram", nvrtc.compile_program) ||
      !resolve("nvrtcGetProgramLogSize", nvrtc.get_log_size) ||
      !resolve("nvrtcGetProgramLog", nvrtc.get_log) ||
      !resolve("nvrtcGetCUBINSize", nvrtc.get_cubin_size) ||
      !resolve("nvrtcGetCUBIN", nvrtc.get_cubin) ||
      !resolve("nvrtcGetPTXSize", nvrtc.get_ptx_size) || !resolve("nvrtcGetPTX", nvrtc.get_ptx)) {
    return nvrtc;
  }
  int count = 0;
  if (version(&nvrtc.major, &nvrtc.minor) != 0 || get_arch_count(&count) != 0) {
    failure = nvrtc.library + " does not answer nvrtcVersion or nvrtcGetNumSupportedArchs";
    return nvrtc;
  }
  nvrtc.archs.resize(count);
  if (count > 0 && get_archs(nvrtc.archs.data()) != 0) {
    failure = nvrtc.library + " does not answer nvrtcGetSupportedArchs";
  }
  return nvrtc;
}

const Nvrtc& nvrtc() {
  static const Nvrtc loaded = load();
  return loaded;
}

/// The source with numbered lines, as NVRTC's log refers to them.
std::string numbered(const std::string& source) {
  std::string text;
  int number = 1;
  size_t start = 0;
  while (start < source.size()) {
    const size_t end = std::min(source.find('\n', start), source.size());
    char prefix[16];
    std::snprintf(prefix, sizeof(prefix), "%5d | ", number++);
    text += prefix;
    text.append(source, start, end - start);
    text += '\n';
    start = end + 1;
  }
  return text;
}

std::string fetch_text(Program program, GetSize size_of, GetBytes bytes_of) {
  size_t size = 0;
  if (size_of(program, &size) != 0 || size == 0) return "";
  std::string text(size, '\0');
  if (bytes_of(program, text.data()) != 0) return "";
  text.resize(text.find('\0') == std::string::npos ? text.size() : text.find('\0'));
  return text;
}

/// The architecture number of "sm_90" or "compute_90" (90), or -1.
int arch_number(const std::string& arch) {
  const size_t underscore = arch.find('_');
  if (underscore == std::string::npos) return -1;
  try {
    return std::stoi(arch.substr(underscore + 1));
  } catch (const std::exception&) {
    return -1;
  }
}

}  // namespace

bool nvrtc_available(std::string* why) {
  const Nvrtc& api = nvrtc();
  if (why != nullptr) *why = api.failure;
  return api.failure.empty();
}

std::string nvrtc_version() {
  const Nvrtc& api = nvrtc();
  if (!api.failure.empty()) return "";
  return std::to_string(api.major) + "." + std::to_string(api.minor);
}

CompiledCuda compile_cuda(const std::string& source, const std::string& arch, bool want_ptx) {
  const Nvrtc& api = nvrtc();
  if (!api.failure.empty()) throw Error("[cuda] cannot compile: " + api.failure);
  const int number = arch_number(arch);
  if (arch.rfind("sm_", 0) != 0 || number < 0) {
    throw Error("[cuda] architecture '" + arch + "' is not of the form sm_<number> (sm_90)");
  }
  CompiledCuda compiled;
  const bool real = std::find(api.archs.begin(), api.archs.end(), number) != api.archs.end();
  if (real) {
    compiled.target = arch;
  } else {
    // The newest virtual architecture below the device's: its PTX runs there through the
    // driver's JIT.
    int fallback = -1;
    for (int supported : api.archs) {
      if (supported <= number) fallback = std::max(fallback, supported);
    }
    if (fallback < 0) {
      throw Error("[cuda] NVRTC " + std::to_string(api.major) + "." + std::to_string(api.minor) +
                  " supports no architecture at or below " + arch);
    }
    compiled.target = "compute_" + std::to_string(fallback);
  }
  const std::string architecture = "--gpu-architecture=" + compiled.target;
  // IEEE-exact: no fast math, no contraction of a * b + c into an FMA (the interpreter rounds
  // each operation), denormals kept, division and square roots correctly rounded.
  const char* options[] = {"-std=c++17",  architecture.c_str(), "-default-device",  "--fmad=false",
                           "--ftz=false", "--prec-div=true",    "--prec-sqrt=true", "-lineinfo"};
  Program program = nullptr;
  if (const int result =
          api.create_program(&program, source.c_str(), "lazuli_kernels.cu", 0, nullptr, nullptr);
      result != 0) {
    throw Error(std::string("[cuda] nvrtcCreateProgram failed: ") + api.get_error_string(result));
  }
  struct Destroy {
    const Nvrtc& api;
    Program& program;
    ~Destroy() { api.destroy_program(&program); }
  } destroy{api, program};
  const int result = api.compile_program(program, static_cast<int>(std::size(options)), options);
  compiled.log = fetch_text(program, api.get_log_size, api.get_log);
  if (result != 0) {
    throw Error("[cuda] NVRTC failed to compile for " + compiled.target + " (" +
                api.get_error_string(result) + "):\n" + compiled.log + "\n--- source ---\n" +
                numbered(source));
  }
  if (real) {
    size_t size = 0;
    if (api.get_cubin_size(program, &size) != 0 || size == 0) {
      throw Error("[cuda] NVRTC produced no cubin for " + compiled.target);
    }
    compiled.cubin.resize(size);
    if (api.get_cubin(program, compiled.cubin.data()) != 0) {
      throw Error("[cuda] NVRTC cannot return the cubin for " + compiled.target);
    }
  }
  if (want_ptx || !real) {
    compiled.ptx = fetch_text(program, api.get_ptx_size, api.get_ptx);
    if (compiled.ptx.empty()) throw Error("[cuda] NVRTC produced no PTX for " + compiled.target);
  }
  return compiled;
}

}  // namespace lz::codegen::cuda
