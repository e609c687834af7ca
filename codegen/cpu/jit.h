// The LLVM ORC JIT for the host CPU: lowered kernels go through the loop passes that pay
// (vectorizing for the host's features), are compiled to object code and loaded, each in a
// JITDylib of its own that resolves calls against runtime_symbols().
//
// Compile time is spent where it buys speed: kernels bound by memory (is_memory_bound) get
// LLVM's fast instruction selection and register allocation, which halves the time to object
// code and runs them as fast; kernels with transcendentals or reductions get -O1 code
// generation, which runs them up to twice as fast.
//
// Compiling holds a mutex of its own (LLVM's TargetMachine is not thread-safe); nothing else
// in lazuli waits on it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "codegen/cpu/lowering.h"
#include "plan/fusion_plan.h"

namespace lz::codegen {

using PhaseFunction = void (*)(void* const* buffers, const uint64_t* scalars, int64_t begin,
                               int64_t end, uint64_t* state);

struct LoadedPhase {
  PhaseFunction function = nullptr;
  Phase description;
};

/// Text of one compilation for LZ_DUMP.
struct KernelDump {
  std::string ir_before;  // as lowered
  std::string ir_after;   // after optimization
  std::string assembly;
};

/// Where compile time goes, in milliseconds (LZ_LOG=debug prints it per compiled kernel).
struct CompileTimes {
  double lowering = 0;
  double optimization = 0;     // the loop pipeline; 0 for a disk hit
  double code_generation = 0;  // to object code; 0 for a disk hit
  double loading = 0;          // linking the object into the process
  double total() const { return lowering + optimization + code_generation + loading; }
};

/// The loaded code of one kernel (a JITDylib of its own): unloaded, its memory given back, when
/// the last holder lets go.
class LoadedCode;

struct JitKernel {
  std::vector<LoadedPhase> phases;  // valid while `code` is held
  std::shared_ptr<const LoadedCode> code;
  bool from_disk = false;  // the object code came from the ObjectStore
  /// Why the ObjectStore's entry for this kernel was not used, compiled again and replaced;
  /// empty when it was used or there was none.
  std::string store_problem;
  CompileTimes times;
};

/// Where object code persists between processes (the disk cache). The key is exact: the host
/// target (triple, CPU, features), the LLVM version and the kernel's unoptimized IR, so code
/// never runs on a CPU, or for a lazuli, it was not compiled for.
class ObjectStore {
 public:
  virtual ~ObjectStore() = default;
  /// The object stored under `key`, or nullopt; `problem` says why an entry there was not used.
  virtual std::optional<std::string> load(const std::string& key, std::string& problem) = 0;
  virtual void store(const std::string& key, const std::string& object) = 0;
};

/// Lowers `kernel`, holding its sizes as `sizes` says and writing outputs over inputs as
/// `written_over` says, and loads its code: from `store` when it has it (optimization and code
/// generation are then skipped), else freshly compiled and saved there. Stored code that fails to
/// load is a miss: compiled again and replaced. Symbols are named after `name`. Fills `dump`, when
/// given, with the IR and assembly (compiling even on a store hit). Throws plan::UnsupportedKernel
/// when the lowering does not handle the kernel.
JitKernel build_kernel(const plan::Kernel& kernel, plan::Sizes sizes,
                       const plan::WrittenOver& written_over, const std::string& name,
                       ObjectStore* store, KernelDump* dump);

/// Kernels whose code is loaded in the process now.
int64_t loaded_kernel_count();

}  // namespace lz::codegen
