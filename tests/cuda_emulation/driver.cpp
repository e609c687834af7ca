// The fake libcuda.so.1 (with driver_modules.cpp, driver_memory.cpp, driver_streams.cpp): the
// driver API entry points lazuli resolves (runtime/cuda/driver.cpp), with cuda.h's signatures and
// result codes, over host memory (device_memory.h), stream worker threads (stream.h) and the
// block emulation of tests/codegen/cuda_host_emulation.h. Here: the shared state, errors, devices
// and contexts.
#include <cstdio>
#include <string>
#include <vector>

#include "tests/cuda_emulation/driver_state.h"

namespace lz::cuda_emulation {
namespace {

constexpr int kDriverVersion = 13000;
constexpr char kDeviceName[] = "lazuli host emulation";
// The special stream handles CU_STREAM_LEGACY and CU_STREAM_PER_THREAD.
const CUstream kLegacyStream = reinterpret_cast<CUstream>(uintptr_t{1});
const CUstream kPerThreadStream = reinterpret_cast<CUstream>(uintptr_t{2});

thread_local Context* current = nullptr;

struct ErrorText {
  CUresult code;
  const char* name;
  const char* text;
};

constexpr ErrorText kErrors[] = {
    {0, "CUDA_SUCCESS", "no error"},
    {1, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {3, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {4, "CUDA_ERROR_DEINITIALIZED", "driver shutting down"},
    {100, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {101, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {200, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {201, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {400, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {500, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {600, "CUDA_ERROR_NOT_READY", "device not ready"},
    {700, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"},
    {701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "too many resources requested for launch"},
    {719, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
    {801, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
    {999, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

const ErrorText* error_text(CUresult error) {
  for (const ErrorText& known : kErrors) {
    if (known.code == error) return &known;
  }
  return nullptr;
}

/// cuDeviceGetAttribute's answers (CUdevice_attribute values of cuda.h).
int attribute_value(int attribute, bool& known) {
  known = true;
  switch (attribute) {
    case 1: return 1024;        // MAX_THREADS_PER_BLOCK
    case 2: return 1024;        // MAX_BLOCK_DIM_X
    case 3: return 1024;        // MAX_BLOCK_DIM_Y
    case 4: return 64;          // MAX_BLOCK_DIM_Z
    case 5: return 2147483647;  // MAX_GRID_DIM_X
    case 6: return 65535;       // MAX_GRID_DIM_Y
    case 7: return 65535;       // MAX_GRID_DIM_Z
    case 8: return 49152;       // MAX_SHARED_MEMORY_PER_BLOCK
    case 10: return 32;         // WARP_SIZE
    case 16: return 2;          // MULTIPROCESSOR_COUNT
    case 39: return 2048;       // MAX_THREADS_PER_MULTIPROCESSOR
    case 41: return 1;          // UNIFIED_ADDRESSING
    case 75: return 9;          // COMPUTE_CAPABILITY_MAJOR
    case 76: return 0;          // COMPUTE_CAPABILITY_MINOR
    default: known = false; return 0;
  }
}

/// Every stream of `context` (the default one too), or of every context when null.
std::vector<Stream*> streams_of(const Context* context) {
  Driver& state = driver();
  std::lock_guard lock(state.mutex);
  std::vector<Stream*> streams;
  for (Stream* stream : state.streams) {
    if (context == nullptr || &stream->context() == context) streams.push_back(stream);
  }
  for (Stream* stream : state.default_streams) {
    if (stream != nullptr && (context == nullptr || &stream->context() == context)) {
      streams.push_back(stream);
    }
  }
  return streams;
}

}  // namespace

Driver::Driver() {
  for (int d = 0; d < kDeviceCount; ++d) contexts[static_cast<size_t>(d)].device = d;
}

Driver& driver() {
  static Driver* const state = new Driver();
  return *state;
}

CUresult enter(Context*& context) {
  if (!driver().initialized.load()) return kErrorNotInitialized;
  context = current;
  if (context == nullptr) return kErrorInvalidContext;
  return context->fault.load();
}

CUresult stream_of_call(CUstream handle, Stream*& stream) {
  Context* context = nullptr;
  if (const CUresult result = enter(context); result != kSuccess) return result;
  stream = find_stream(handle, *context);
  return stream != nullptr ? kSuccess : kErrorInvalidHandle;
}

void enqueue(Stream& stream, std::function<void()> operation) {
  Context& context = stream.context();
  stream.enqueue([&context, operation = std::move(operation)] {
    if (context.fault.load() == kSuccess) operation();
  });
}

void synchronize(const Context* context) {
  for (Stream* stream : streams_of(context)) stream->synchronize();
}

const char* error_name(CUresult error) {
  const ErrorText* known = error_text(error);
  return known != nullptr ? known->name : nullptr;
}

const char* error_description(CUresult error) {
  const ErrorText* known = error_text(error);
  return known != nullptr ? known->text : nullptr;
}

std::string hex(uint64_t value) {
  char text[32];
  std::snprintf(text, sizeof(text), "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

Context* current_context() { return current; }

Stream* find_stream(CUstream handle, Context& context) {
  Driver& state = driver();
  std::lock_guard lock(state.mutex);
  if (handle == nullptr || handle == kLegacyStream || handle == kPerThreadStream) {
    Stream*& stream = state.default_streams[static_cast<size_t>(context.device)];
    if (stream == nullptr) stream = new Stream(context);  // kept for the life of the process
    return stream;
  }
  auto* stream = reinterpret_cast<Stream*>(handle);
  return state.streams.contains(stream) ? stream : nullptr;
}

int device_holding(CUdeviceptr address, size_t bytes) {
  return driver().memory.device_holding(address, bytes);
}

void fault(Context& context, CUresult error, const std::string& what) {
  CUresult expected = kSuccess;
  if (context.fault.compare_exchange_strong(expected, error)) {
    const char* name = error_name(error);
    std::fprintf(stderr, "[lazuli CUDA emulation] device %d faulted (%s): %s\n", context.device,
                 name != nullptr ? name : "?", what.c_str());
  }
}

void report_misuse(const std::string& what) {
  std::fprintf(stderr, "[lazuli CUDA emulation] %s\n", what.c_str());
}

}  // namespace lz::cuda_emulation

using namespace lz::cuda_emulation;  // NOLINT: the entry points below are C functions

LZ_EMULATION_EXPORT CUresult cuInit(unsigned flags) {
  if (flags != 0) return kErrorInvalidValue;
  driver().initialized = true;
  return kSuccess;
}

LZ_EMULATION_EXPORT CUresult cuDriverGetVersion(int* version) {
  if (version == nullptr) return kErrorInvalidValue;
  *version = kDriverVersion;
  return kSuccess;
}

LZ_EMULATION_EXPORT CUresult cuGetErrorName(CUresult error, const char** name) {
  if (name == nullptr) return kErrorInvalidValue;
  *name = error_name(error);
  return *name != nullptr ? kSuccess : kErrorInvalidValue;
}

LZ_EMULATION_EXPORT CUresult cuGetErrorString(CUresult error, const char** text) {
  if (text == nullptr) return kErrorInvalidValue;
  *text = error_description(error);
  return *text != nullptr ? kSuccess : kErrorInvalidValue;
}

LZ_EMULATION_EXPORT CUresult cuDeviceGetCount(int* count) {
  if (!driver().initialized) return kErrorNotInitialized;
  if (count == nullptr) return kErrorInvalidValue;
  *count = kDeviceCount;
  return kSuccess;
}

LZ_EMULATION_EXPORT CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  if (!driver().initialized) return kErrorNotInitialized;
  if (device == nullptr) return kErrorInvalidValue;
  if (ordinal < 0 || ordinal >= kDeviceCount) return kErrorInvalidDevice;
  *device = ordinal;
  return kSuccess;
}

LZ_EMULATION_EXPORT CUresult cuDeviceGetName(char* name, int length, CUdevice device) {
  if (!driver().initialized) return kErrorNotInitialized;
  if (device < 0 || device >= kDeviceCount) return kErrorInvalidDevice;
  if (name == nullptr || length <= 0) return kErrorInvalidValue;
  std::snprintf(name, static_cast<size_t>(length), "%s", kDeviceName);
  return kSuccess;
}

LZ_EMULATION_EXPORT CUresult cuDeviceGetAttribute(int* value, int attribute, CUdevice device) {
  if (!driver().initialized) return kErrorNotInitialized;
  if (device < 0 || device >= kDeviceCount) return kErrorInvalidDevice;
  if (value == nullptr) return kErrorInvalidValue;
  bool known = false;
  *value = attribute_value(attribute, known);
  if (!known) {
    report_misuse("cuDeviceGetAttribute: attribute " + std::to_string(attribute) +
                  " is not emulated (tests/cuda_emulation/driver.cpp lists those that are)");
    return kErrorInvalidValue;
  }
  return kSuccess;
}

LZ_EMULATION_EXPORT CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice device) {
  if (!driver().initialized) return kErrorNotInitialized;
  if (device < 0 || device >= kDeviceCount) return kErrorInvalidDevice;
  if (bytes == nullptr) return kErrorInvalidValue;
  *bytes = kDeviceMemoryBytes;
  return kSuccess;
}

LZ_EMULATION_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext* context, CUdevice device) {
  if (!driver().initialized) return kErrorNotInitialized;
  if (device < 0 || device >= kDeviceCount) return kErrorInvalidDevice;
  if (context == nullptr) return kErrorInvalidValue;
  Context& primary = driver().contexts[static_cast<size_t>(device)];
  ++primary.retained;
  *context = reinterpret_cast<CUcontext>(&primary);
  return kSuccess;
}

LZ_EMULATION_EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice device) {
  if (!driver().initialized) return kErrorNotInitialized;
  if (device < 0 || device >= kDeviceCount) return kErrorInvalidDevice;
  Context& primary = driver().contexts[static_cast<size_t>(device)];
  int retained = primary.retained.load();
  do {
    if (retained == 0) return kErrorInvalidContext;
  } while (!primary.retained.compare_exchange_weak(retained, retained - 1));
  return kSuccess;
}

LZ_EMULATION_EXPORT CUresult cuCtxSetCurrent(CUcontext handle) {
  if (!driver().initialized) return kErrorNotInitialized;
  if (handle == nullptr) {
    current = nullptr;
    return kSuccess;
  }
  auto* context = reinterpret_cast<Context*>(handle);
  const auto& contexts = driver().contexts;
  if (context < contexts.data() || context >= contexts.data() + contexts.size()) {
    return kErrorInvalidContext;
  }
  if (context->retained.load() == 0) {
    report_misuse("cuCtxSetCurrent: device " + std::to_string(context->device) +
                  "'s primary context is not retained");
    return kErrorInvalidContext;
  }
  current = context;
  return kSuccess;
}

LZ_EMULATION_EXPORT CUresult cuCtxSynchronize() {
  if (!driver().initialized) return kErrorNotInitialized;
  Context* context = current;
  if (context == nullptr) return kErrorInvalidContext;
  synchronize(context);
  return context->fault.load();
}
