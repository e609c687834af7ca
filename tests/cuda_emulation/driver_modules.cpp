// The fake driver's modules and launches: a module is the shared object a fake NVRTC image
// carries (kernel_image.h), a function its entry's emulated thread (kernel_entry.h), a launch
// the emulated blocks of it run on a stream.
#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <vector>

#include "tests/cuda_emulation/driver_state.h"
#include "tests/cuda_emulation/kernel_image.h"
#include "tests/cuda_emulation/scratch_directory.h"

namespace lz::cuda_emulation {
namespace {

/// The block emulator of the process: one launch at a time (CUDA promises no concurrency between
/// streams). Its threads are stopped at exit, once the launch in progress has finished: threads
/// left running would hold the kernels' thread-local storage, which LeakSanitizer's exit scan
/// trips over.
struct Blocks {
  std::mutex mutex;
  BlockEmulator* emulator = nullptr;  // guarded by mutex
  bool exiting = false;               // guarded by mutex
};

Blocks& blocks() {
  static Blocks* const state = new Blocks();  // never destroyed: stream workers outlive exit
  return *state;
}

void stop_blocks_at_exit() {
  Blocks& state = blocks();
  std::lock_guard lock(state.mutex);
  delete state.emulator;
  state.emulator = nullptr;
  state.exiting = true;
}

/// Runs `count` blocks of `thread`; nothing once the process is exiting.
void run_blocks(EntryThread thread, void* const* parameters, unsigned count) {
  Blocks& state = blocks();
  std::lock_guard lock(state.mutex);
  if (state.exiting) return;
  if (state.emulator == nullptr) {
    state.emulator = new BlockEmulator();
    std::atexit(stop_blocks_at_exit);
  }
  EntryArguments arguments;
  arguments.buffers = parameters;
  state.emulator->launch(thread, arguments, count);
}

}  // namespace
}  // namespace lz::cuda_emulation

using namespace lz::cuda_emulation;  // NOLINT: the entry points below are C functions

LZ_EMULATION_EXPORT CUresult cuModuleLoadData(CUmodule* module, const void* image) {
  Context* context = nullptr;
  if (const CUresult result = enter(context); result != kSuccess) return result;
  if (module == nullptr || image == nullptr) return kErrorInvalidValue;
  const std::optional<std::string> library = decode_image(static_cast<const char*>(image));
  if (!library.has_value()) {
    report_misuse(
        "cuModuleLoadData: the image is not one of the emulation's fake NVRTC (a real cubin or "
        "PTX, from a kernel cache shared with a GPU run?)");
    return kErrorInvalidImage;
  }
  std::string path;
  try {
    path = scratch_path("module", ".so").string();
    std::ofstream file(path, std::ios::binary);
    file.write(library->data(), static_cast<std::streamsize>(library->size()));
    if (!file.flush()) throw std::runtime_error("cannot write " + path);
  } catch (const std::exception& failure) {
    report_misuse(std::string("cuModuleLoadData: ") + failure.what());
    return kErrorInvalidImage;
  }
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    report_misuse(std::string("cuModuleLoadData: ") + dlerror());
    return kErrorInvalidImage;
  }
  auto* loaded = new Module();
  loaded->context = context;
  loaded->library = handle;
  Driver& state = driver();
  std::lock_guard lock(state.mutex);
  state.modules.insert(loaded);
  *module = reinterpret_cast<CUmodule>(loaded);
  return kSuccess;
}

LZ_EMULATION_EXPORT CUresult cuModuleUnload(CUmodule handle) {
  if (!driver().initialized) return kErrorNotInitialized;
  auto* module = reinterpret_cast<Module*>(handle);
  Driver& state = driver();
  {
    std::lock_guard lock(state.mutex);
    if (!state.modules.contains(module)) return kErrorInvalidHandle;
  }
  synchronize(module->context);  // no queued launch may still run its code
  {
    std::lock_guard lock(state.mutex);
    state.modules.erase(module);
    for (const auto& [name, function] : module->functions) state.functions.erase(function.get());
  }
  dlclose(module->library);
  delete module;
  return kSuccess;
}

LZ_EMULATION_EXPORT CUresult cuModuleGetFunction(CUfunction* function, CUmodule handle,
                                                 const char* name) {
  if (!driver().initialized) return kErrorNotInitialized;
  if (function == nullptr || name == nullptr) return kErrorInvalidValue;
  auto* module = reinterpret_cast<Module*>(handle);
  Driver& state = driver();
  std::lock_guard lock(state.mutex);
  if (!state.modules.contains(module)) return kErrorInvalidHandle;
  std::unique_ptr<Function>& found = module->functions[name];
  if (found == nullptr) {
    const std::string entry = name;
    auto* thread =
        reinterpret_cast<EntryThread>(dlsym(module->library, (entry + "_lz_thread").c_str()));
    const auto* parameters = static_cast<const EntryParameters*>(
        dlsym(module->library, (entry + "_lz_parameters").c_str()));
    if (thread == nullptr || parameters == nullptr) {
      module->functions.erase(name);
      return kErrorNotFound;
    }
    found = std::make_unique<Function>(Function{module, entry, thread, parameters});
    state.functions.insert(found.get());
  }
  *function = reinterpret_cast<CUfunction>(found.get());
  return kSuccess;
}

LZ_EMULATION_EXPORT CUresult cuLaunchKernel(CUfunction handle, unsigned grid_x, unsigned grid_y,
                                            unsigned grid_z, unsigned block_x, unsigned block_y,
                                            unsigned block_z, unsigned shared_bytes,
                                            CUstream stream_handle, void** parameters,
                                            void** extra) {
  Context* context = nullptr;
  if (const CUresult result = enter(context); result != kSuccess) return result;
  auto* function = reinterpret_cast<Function*>(handle);
  {
    std::lock_guard lock(driver().mutex);
    if (!driver().functions.contains(function)) return kErrorInvalidHandle;
  }
  if (function->module->context != context) {
    report_misuse("cuLaunchKernel: the function was loaded on device " +
                  std::to_string(function->module->context->device) + ", but device " +
                  std::to_string(context->device) + "'s context is current");
    return kErrorInvalidContext;
  }
  if (grid_x == 0 || grid_y == 0 || grid_z == 0 || block_x == 0 || block_y == 0 || block_z == 0 ||
      uint64_t{block_x} * block_y * block_z > 1024) {
    return kErrorInvalidValue;
  }
  if (block_x != kBlockThreads || block_y != 1 || block_z != 1 || grid_y != 1 || grid_z != 1 ||
      shared_bytes != 0 || extra != nullptr) {
    report_misuse(
        "cuLaunchKernel: the emulation runs one-dimensional grids of 256-thread blocks, without "
        "dynamic shared memory or `extra` parameters");
    return kErrorNotSupported;
  }
  const EntryParameters& layout = *function->parameters;
  if (layout.count > 0 && parameters == nullptr) return kErrorInvalidValue;
  Stream* stream = find_stream(stream_handle, *context);
  if (stream == nullptr) return kErrorInvalidHandle;
  if (&stream->context() != context) {
    report_misuse("cuLaunchKernel: the stream belongs to device " +
                  std::to_string(stream->context().device) + ", but device " +
                  std::to_string(context->device) + "'s context is current");
    return kErrorInvalidHandle;
  }
  // The values are copied now, as CUDA does: the caller's variables may be gone when it runs.
  constexpr size_t kStorageAlignment = 64;
  std::vector<size_t> offsets;
  size_t bytes = 0;
  for (size_t i = 0; i < layout.count; ++i) {
    if (layout.alignments[i] > kStorageAlignment) return kErrorNotSupported;
    bytes = (bytes + layout.alignments[i] - 1) / layout.alignments[i] * layout.alignments[i];
    offsets.push_back(bytes);
    bytes += layout.sizes[i];
  }
  const std::shared_ptr<unsigned char> storage(
      static_cast<unsigned char*>(std::aligned_alloc(
          kStorageAlignment, (bytes + kStorageAlignment) / kStorageAlignment * kStorageAlignment)),
      std::free);
  if (storage == nullptr) return kErrorOutOfMemory;
  auto values = std::make_shared<std::vector<void*>>();
  std::string foreign;  // why the kernel would read another device's memory
  for (size_t i = 0; i < layout.count; ++i) {
    std::memcpy(storage.get() + offsets[i], parameters[i], layout.sizes[i]);
    values->push_back(storage.get() + offsets[i]);
    // A pointer into another device's memory: a GPU faults on it (no peer access is enabled).
    // Taken for a pointer: any 8-byte value that is an address of a live allocation.
    CUdeviceptr value = 0;
    if (layout.sizes[i] != sizeof(value)) continue;
    std::memcpy(&value, parameters[i], sizeof(value));
    const int device = device_holding(value, 1);
    if (device >= 0 && device != context->device && foreign.empty()) {
      foreign = function->name + " on device " + std::to_string(context->device) +
                " was given parameter " + std::to_string(i) + " = " + hex(value) +
                ", memory of device " + std::to_string(device);
    }
  }
  Context& launched_on = *context;
  enqueue(*stream, [&launched_on, thread = function->thread, storage, values, grid_x, foreign] {
    if (!foreign.empty()) {
      fault(launched_on, kErrorIllegalAddress, foreign);
      return;
    }
    run_blocks(thread, values->data(), grid_x);
  });
  return kSuccess;
}
