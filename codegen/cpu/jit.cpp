#include "codegen/cpu/jit.h"

#include <chrono>
#include <mutex>

#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/DynamicLibrary.h>
#include <llvm/Support/Host.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Transforms/InstCombine/InstCombine.h>
#include <llvm/Transforms/Scalar/EarlyCSE.h>
#include <llvm/Transforms/Scalar/IndVarSimplify.h>
#include <llvm/Transforms/Scalar/LICM.h>
#include <llvm/Transforms/Scalar/LoopPassManager.h>
#include <llvm/Transforms/Scalar/LoopRotation.h>
#include <llvm/Transforms/Scalar/SROA.h>
#include <llvm/Transforms/Scalar/SimplifyCFG.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/Transforms/Utils/InjectTLIMappings.h>
#include <llvm/Transforms/Vectorize/LoopVectorize.h>

#include "codegen/cpu/lowering.h"
#include "codegen/cpu/runtime_helpers.h"
#include "lazuli/error.h"
#include "plan/kernel_signature.h"

namespace lz::codegen {

class LoadedCode {
 public:
  explicit LoadedCode(llvm::orc::JITDylib& library) : library_(library) {}
  ~LoadedCode();
  LoadedCode(const LoadedCode&) = delete;
  LoadedCode& operator=(const LoadedCode&) = delete;

 private:
  llvm::orc::JITDylib& library_;
};

namespace {

[[noreturn]] void fail(const std::string& what, llvm::Error error) {
  throw Error("CPU JIT: " + what + ": " + llvm::toString(std::move(error)));
}

template <class T>
T take(llvm::Expected<T> value, const std::string& what) {
  if (!value) fail(what, value.takeError());
  if constexpr (std::is_reference_v<T>) {
    return *value;
  } else {
    return std::move(*value);
  }
}

double milliseconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

std::string module_text(const llvm::Module& module) {
  std::string text;
  llvm::raw_string_ostream stream(text);
  module.print(stream, nullptr);
  return stream.str();
}

/// Names the optimization pipeline in the disk cache's key: code that an earlier pipeline made
/// from the same IR is not taken. Change it with optimize() or the options set beside it.
constexpr const char* kPipelineRevision = "pipeline 2\n";

/// The process-wide JIT. Never destroyed: kernels may run until the process exits.
class HostJit {
 public:
  static HostJit& instance() {
    static HostJit* jit = new HostJit();
    return *jit;
  }

  const std::string& target_id() const { return target_id_; }

  /// Optimizes `module` in place and returns its object code.
  std::string compile(llvm::Module& module, bool quick, KernelDump* dump, CompileTimes& times) {
    std::lock_guard lock(compile_mutex_);
    module.setDataLayout(machine_->createDataLayout());
    module.setTargetTriple(machine_->getTargetTriple().str());
    if (dump) dump->ir_before = module_text(module);
    auto start = std::chrono::steady_clock::now();
    optimize(module);
    times.optimization = milliseconds_since(start);
    if (dump) {
      dump->ir_after = module_text(module);
      std::unique_ptr<llvm::Module> copy = llvm::CloneModule(module);
      dump->assembly = emit(*copy, quick, llvm::CGFT_AssemblyFile);
    }
    start = std::chrono::steady_clock::now();
    std::string object = emit(module, quick, llvm::CGFT_ObjectFile);
    times.code_generation = milliseconds_since(start);
    return object;
  }

  /// Loads `object` into a JITDylib of its own, held by `code`, and returns the addresses of
  /// `symbols`.
  std::vector<void*> load(const std::string& object, const std::string& name,
                          const std::vector<std::string>& symbols,
                          std::shared_ptr<const LoadedCode>& code) {
    llvm::orc::JITDylib& library =
        take(jit_->createJITDylib(name + "#" + std::to_string(++library_count_)),
             "creating a library for " + name);
    loaded_.fetch_add(1, std::memory_order_relaxed);
    library.addToLinkOrder(*runtime_);
    try {
      if (llvm::Error error =
              jit_->addObjectFile(library, llvm::MemoryBuffer::getMemBufferCopy(object, name))) {
        fail("loading the object code of " + name, std::move(error));
      }
      std::vector<void*> addresses;
      for (const std::string& symbol : symbols) {
        const llvm::JITEvaluatedSymbol found =
            take(jit_->lookup(library, symbol), "finding " + symbol);
        addresses.push_back(llvm::jitTargetAddressToPointer<void*>(found.getAddress()));
      }
      code = std::make_shared<const LoadedCode>(library);
      return addresses;
    } catch (const Error&) {
      // Nothing of the library is in use: drop it (and what it loaded) before reporting.
      unload(library);
      throw;
    }
  }

  /// Removes `library` and frees the code it loaded; nothing may run it any more.
  void unload(llvm::orc::JITDylib& library) {
    llvm::consumeError(jit_->getExecutionSession().removeJITDylib(library));
    loaded_.fetch_sub(1, std::memory_order_relaxed);
  }

  int64_t loaded() const { return loaded_.load(std::memory_order_relaxed); }

 private:
  HostJit() {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
    llvm::orc::JITTargetMachineBuilder builder =
        take(llvm::orc::JITTargetMachineBuilder::detectHost(), "detecting the host CPU");
    builder.setCodeGenOptLevel(llvm::CodeGenOpt::Less);
    // The vectorizer would version a loop reading at a runtime stride (a transposed read of a
    // kernel of runtime sizes) on "stride == 1" and run the vector copy only then; a runtime
    // extent is never 1, so every such loop would run its scalar copy.
    llvm::StringMap<llvm::cl::Option*>& options = llvm::cl::getRegisteredOptions();
    if (auto found = options.find("enable-mem-access-versioning"); found != options.end()) {
      static_cast<llvm::cl::opt<bool>*>(found->second)->setValue(false);
    }
    // glibc's vector math library gives vectorized loops float64 exp, log, sin, cos and pow.
    has_libmvec_ = !llvm::sys::DynamicLibrary::LoadLibraryPermanently("libmvec.so.1");
    target_id_ = builder.getTargetTriple().str() + ";" + builder.getCPU() + ";" +
                 builder.getFeatures().getString() + (has_libmvec_ ? ";libmvec" : "");
    machine_ = take(builder.createTargetMachine(), "creating the target machine");
    builder.setCodeGenOptLevel(llvm::CodeGenOpt::None);
    quick_machine_ = take(builder.createTargetMachine(), "creating the target machine");
    jit_ = take(llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(builder).create(),
                "starting LLJIT");
    runtime_ = &take(jit_->createJITDylib("lazuli_runtime"), "creating the runtime library");
    llvm::orc::SymbolMap symbols;
    for (const RuntimeSymbol& symbol : runtime_symbols()) {
      symbols[jit_->mangleAndIntern(symbol.name)] =
          llvm::JITEvaluatedSymbol(llvm::pointerToJITTargetAddress(symbol.address),
                                   llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable);
    }
    if (llvm::Error error = runtime_->define(llvm::orc::absoluteSymbols(std::move(symbols)))) {
      fail("defining the runtime symbols", std::move(error));
    }
    // Anything else the code generator calls (compiler-rt style helpers) comes from the process.
    runtime_->addGenerator(take(llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
                                    jit_->getDataLayout().getGlobalPrefix()),
                                "searching the process for symbols"));
  }

  /// The passes that pay for kernel loops, instead of the whole O2 pipeline (whose inliner,
  /// loop unroller and interprocedural passes find nothing to do in a kernel but cost
  /// milliseconds): promote accumulators to registers, simplify, hoist loop-invariant index
  /// arithmetic and results, canonicalize induction variables, vectorize, clean up.
  void optimize(llvm::Module& module) {
    llvm::PassBuilder builder(machine_.get());
    llvm::LoopAnalysisManager loops;
    llvm::FunctionAnalysisManager functions;
    llvm::CGSCCAnalysisManager cgscc;
    llvm::ModuleAnalysisManager modules;
    llvm::TargetLibraryInfoImpl library(machine_->getTargetTriple());
    if (has_libmvec_) {
      library.addVectorizableFunctionsFromVecLib(llvm::TargetLibraryInfoImpl::LIBMVEC_X86);
    }
    functions.registerPass([&] { return llvm::TargetLibraryAnalysis(library); });
    builder.registerModuleAnalyses(modules);
    builder.registerCGSCCAnalyses(cgscc);
    builder.registerFunctionAnalyses(functions);
    builder.registerLoopAnalyses(loops);
    builder.crossRegisterProxies(loops, functions, cgscc, modules);

    llvm::FunctionPassManager pipeline;
    pipeline.addPass(llvm::SROAPass());
    pipeline.addPass(llvm::EarlyCSEPass());
    pipeline.addPass(llvm::InstCombinePass());
    pipeline.addPass(llvm::SimplifyCFGPass());
    llvm::LoopPassManager loop_passes;
    loop_passes.addPass(llvm::LoopRotatePass());
    loop_passes.addPass(llvm::LICMPass());
    loop_passes.addPass(llvm::IndVarSimplifyPass());
    pipeline.addPass(
        llvm::createFunctionToLoopPassAdaptor(std::move(loop_passes), /*UseMemorySSA=*/true));
    // Interleaving (several vectors per iteration) only where the lowering asks for it, to
    // hide a reduction accumulator's latency; elementwise loops are bound by memory either way
    // and would only grow the code to compile.
    pipeline.addPass(llvm::InjectTLIMappings());  // libmvec variants, for the vectorizer
    pipeline.addPass(llvm::LoopVectorizePass(llvm::LoopVectorizeOptions(
        /*InterleaveOnlyWhenForced=*/true, /*VectorizeOnlyWhenForced=*/false)));
    pipeline.addPass(llvm::EarlyCSEPass());
    pipeline.addPass(llvm::InstCombinePass());
    pipeline.addPass(llvm::SimplifyCFGPass());
    llvm::ModulePassManager module_passes;
    module_passes.addPass(llvm::createModuleToFunctionPassAdaptor(std::move(pipeline)));
    module_passes.run(module, modules);
    mark_streaming_stores(module);
  }

  /// In phases that stream their outputs (kStreamingStoresAttribute), makes every vector store
  /// known to be aligned to its size non-temporal: those the vectorizer made from the loop that
  /// starts at an aligned position. x86 has no unaligned non-temporal vector store, so the rest
  /// (the loops' first and last few elements) stay ordinary.
  static void mark_streaming_stores(llvm::Module& module) {
    const llvm::DataLayout& layout = module.getDataLayout();
    for (llvm::Function& function : module) {
      if (!function.hasFnAttribute(kStreamingStoresAttribute)) continue;
      llvm::MDNode* nontemporal = llvm::MDNode::get(
          module.getContext(), llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(
                                   llvm::Type::getInt32Ty(module.getContext()), 1)));
      for (llvm::BasicBlock& block : function) {
        for (llvm::Instruction& instruction : block) {
          auto* store = llvm::dyn_cast<llvm::StoreInst>(&instruction);
          if (store == nullptr) continue;
          llvm::Type* type = store->getValueOperand()->getType();
          if (type->isVectorTy() &&
              store->getAlign().value() >= layout.getTypeStoreSize(type).getFixedSize()) {
            store->setMetadata(llvm::LLVMContext::MD_nontemporal, nontemporal);
          }
        }
      }
    }
  }

  std::string emit(llvm::Module& module, bool quick, llvm::CodeGenFileType type) {
    llvm::TargetMachine& machine = quick ? *quick_machine_ : *machine_;
    llvm::SmallVector<char, 0> buffer;
    llvm::raw_svector_ostream stream(buffer);
    llvm::legacy::PassManager passes;
    if (machine.addPassesToEmitFile(passes, stream, nullptr, type)) {
      throw Error("CPU JIT: the target cannot emit this kind of file");
    }
    passes.run(module);
    return std::string(buffer.data(), buffer.size());
  }

  std::mutex compile_mutex_;
  bool has_libmvec_ = false;
  std::string target_id_;
  std::unique_ptr<llvm::TargetMachine> machine_;        // -O1 instruction selection
  std::unique_ptr<llvm::TargetMachine> quick_machine_;  // fast instruction selection
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  llvm::orc::JITDylib* runtime_ = nullptr;
  std::atomic<int64_t> library_count_{0};
  std::atomic<int64_t> loaded_{0};  // libraries loaded and not removed
};

}  // namespace

LoadedCode::~LoadedCode() { HostJit::instance().unload(library_); }

JitKernel build_kernel(const plan::Kernel& kernel, plan::Sizes sizes,
                       const plan::WrittenOver& written_over, const std::string& name,
                       ObjectStore* store, KernelDump* dump) {
  HostJit& jit = HostJit::instance();
  JitKernel result;
  auto start = std::chrono::steady_clock::now();
  llvm::LLVMContext context;
  LoweredKernel lowered = lower_kernel(kernel, sizes, written_over, context, name);
  const bool memory_bound = plan::is_memory_bound(kernel);  // compiled quickly (jit.h)
  std::string key;
  std::optional<std::string> object;
  if (store != nullptr) {
    key = jit.target_id() + "\nLLVM " LLVM_VERSION_STRING "\n" + kPipelineRevision +
          (memory_bound ? "quick\n" : "") + module_text(*lowered.module);
    object = store->load(key, result.store_problem);
    result.from_disk = object.has_value();
  }
  result.times.lowering = milliseconds_since(start);
  if (!object || dump != nullptr) {
    object = jit.compile(*lowered.module, memory_bound, dump, result.times);
    if (store != nullptr && !result.from_disk) store->store(key, *object);
  }
  start = std::chrono::steady_clock::now();
  std::vector<std::string> symbols;
  for (const Phase& phase : lowered.phases) symbols.push_back(phase.symbol);
  std::vector<void*> addresses;
  try {
    addresses = jit.load(*object, name, symbols, result.code);
  } catch (const Error& error) {
    if (!result.from_disk) throw;
    // The entry passed its checksum, yet its code does not load (written by a faulty process,
    // say): a miss, so that it cannot fail every later process too.
    result.store_problem =
        "the cached object code did not load (" + std::string(error.what()) + ")";
    result.from_disk = false;
    object = jit.compile(*lowered.module, memory_bound, dump, result.times);
    store->store(key, *object);
    start = std::chrono::steady_clock::now();
    addresses = jit.load(*object, name, symbols, result.code);
  }
  for (size_t i = 0; i < lowered.phases.size(); ++i) {
    result.phases.push_back({reinterpret_cast<PhaseFunction>(addresses[i]), lowered.phases[i]});
  }
  result.times.loading = milliseconds_since(start);
  return result;
}

int64_t loaded_kernel_count() { return HostJit::instance().loaded(); }

}  // namespace lz::codegen
