// The fake driver's memory: allocations (device_memory.h) and the copies and memsets queued on
// streams, with CUDA's rules for pageable host memory.
#include <cstring>
#include <memory>
#include <vector>

#include "tests/cuda_emulation/driver_state.h"

namespace lz::cuda_emulation {
namespace {

/// The memcpy of a queued copy, when it runs: its device sides (`to_device`, `from_device`)
/// must still be allocated, or the device faults.
void checked_copy(Context& context, void* to, bool to_device, const void* from, bool from_device,
                  size_t bytes, const char* call) {
  if ((to_device && device_holding(reinterpret_cast<uintptr_t>(to), bytes) < 0) ||
      (from_device && device_holding(reinterpret_cast<uintptr_t>(from), bytes) < 0)) {
    fault(context, kErrorIllegalAddress,
          std::string(call) + " ran over device memory freed after it was queued");
    return;
  }
  std::memcpy(to, from, bytes);
}

/// Whether [device, device + bytes) is device memory and [host, host + bytes) (when given) is
/// not; says why not.
bool valid_copy(const char* call, CUdeviceptr device, const void* host, size_t bytes) {
  if (device_holding(device, bytes) < 0) {
    report_misuse(std::string(call) + ": [" + hex(device) + ", +" + std::to_string(bytes) +
                  ") is not within one device allocation");
    return false;
  }
  if (host != nullptr && driver().memory.overlaps(host, bytes)) {
    report_misuse(std::string(call) + ": the host pointer " +
                  hex(reinterpret_cast<uintptr_t>(host)) + " is device memory");
    return false;
  }
  return true;
}

}  // namespace
}  // namespace lz::cuda_emulation

using namespace lz::cuda_emulation;  // NOLINT: the entry points below are C functions

LZ_EMULATION_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr* address, size_t bytes) {
  Context* context = nullptr;
  if (const CUresult result = enter(context); result != kSuccess) return result;
  if (address == nullptr || bytes == 0) return kErrorInvalidValue;
  return driver().memory.allocate(context->device, bytes, *address);
}

LZ_EMULATION_EXPORT CUresult cuMemFree_v2(CUdeviceptr address) {
  Context* context = nullptr;
  if (const CUresult result = enter(context); result != kSuccess) return result;
  if (address == 0) return kSuccess;
  const int device = driver().memory.device_of(address);
  if (device < 0) {
    report_misuse("cuMemFree: " + hex(address) + " is not an address cuMemAlloc returned");
    return kErrorInvalidValue;
  }
  // cuMemFree waits for the device's queued work, as CUDA's does.
  synchronize(&driver().contexts[static_cast<size_t>(device)]);
  driver().memory.free(address);
  return kSuccess;
}

LZ_EMULATION_EXPORT CUresult cuMemAllocHost_v2(void** host, size_t bytes) {
  Context* context = nullptr;
  if (const CUresult result = enter(context); result != kSuccess) return result;
  if (host == nullptr || bytes == 0) return kErrorInvalidValue;
  return driver().memory.allocate_host(bytes, *host);
}

LZ_EMULATION_EXPORT CUresult cuMemFreeHost(void* host) {
  Context* context = nullptr;
  if (const CUresult result = enter(context); result != kSuccess) return result;
  synchronize(nullptr);  // queued copies may still read or write it
  if (!driver().memory.free_host(host)) {
    report_misuse("cuMemFreeHost: the pointer is not one cuMemAllocHost returned");
    return kErrorInvalidValue;
  }
  return kSuccess;
}

LZ_EMULATION_EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr to, const void* from, size_t bytes,
                                                  CUstream handle) {
  Stream* stream = nullptr;
  if (const CUresult result = stream_of_call(handle, stream); result != kSuccess) return result;
  if (bytes == 0) return kSuccess;
  if (from == nullptr || !valid_copy("cuMemcpyHtoDAsync", to, from, bytes)) {
    return kErrorInvalidValue;
  }
  auto* destination = reinterpret_cast<void*>(static_cast<uintptr_t>(to));
  Context& context = stream->context();
  if (driver().memory.is_page_locked(from, bytes)) {  // read when the copy runs
    enqueue(*stream, [&context, destination, from, bytes] {
      checked_copy(context, destination, true, from, false, bytes, "cuMemcpyHtoDAsync");
    });
    return kSuccess;
  }
  // Pageable memory is staged now: the caller may reuse it as soon as the call returns.
  auto staged = std::make_shared<std::vector<unsigned char>>(
      static_cast<const unsigned char*>(from), static_cast<const unsigned char*>(from) + bytes);
  enqueue(*stream, [&context, destination, staged] {
    checked_copy(context, destination, true, staged->data(), false, staged->size(),
                 "cuMemcpyHtoDAsync");
  });
  return kSuccess;
}

LZ_EMULATION_EXPORT CUresult cuMemcpyDtoHAsync_v2(void* to, CUdeviceptr from, size_t bytes,
                                                  CUstream handle) {
  Stream* stream = nullptr;
  if (const CUresult result = stream_of_call(handle, stream); result != kSuccess) return result;
  if (bytes == 0) return kSuccess;
  if (to == nullptr || !valid_copy("cuMemcpyDtoHAsync", from, to, bytes)) {
    return kErrorInvalidValue;
  }
  const auto* source = reinterpret_cast<const void*>(static_cast<uintptr_t>(from));
  Context& context = stream->context();
  enqueue(*stream, [&context, to, source, bytes] {
    checked_copy(context, to, false, source, true, bytes, "cuMemcpyDtoHAsync");
  });
  // Into pageable memory, the call returns once the copy has run (CUDA's documented behaviour).
  if (!driver().memory.is_page_locked(to, bytes)) {
    stream->synchronize();
    return context.fault.load();
  }
  return kSuccess;
}

LZ_EMULATION_EXPORT CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr to, CUdeviceptr from, size_t bytes,
                                                  CUstream handle) {
  Stream* stream = nullptr;
  if (const CUresult result = stream_of_call(handle, stream); result != kSuccess) return result;
  if (bytes == 0) return kSuccess;
  if (!valid_copy("cuMemcpyDtoDAsync", to, nullptr, bytes) ||
      !valid_copy("cuMemcpyDtoDAsync", from, nullptr, bytes)) {
    return kErrorInvalidValue;
  }
  auto* destination = reinterpret_cast<void*>(static_cast<uintptr_t>(to));
  const auto* source = reinterpret_cast<const void*>(static_cast<uintptr_t>(from));
  Context& context = stream->context();
  enqueue(*stream, [&context, destination, source, bytes] {
    checked_copy(context, destination, true, source, true, bytes, "cuMemcpyDtoDAsync");
  });
  return kSuccess;
}

LZ_EMULATION_EXPORT CUresult cuMemsetD8Async(CUdeviceptr to, unsigned char value, size_t bytes,
                                             CUstream handle) {
  Stream* stream = nullptr;
  if (const CUresult result = stream_of_call(handle, stream); result != kSuccess) return result;
  if (bytes == 0) return kSuccess;
  if (!valid_copy("cuMemsetD8Async", to, nullptr, bytes)) return kErrorInvalidValue;
  Context& context = stream->context();
  enqueue(*stream, [&context, to, value, bytes] {
    if (device_holding(to, bytes) < 0) {
      fault(context, kErrorIllegalAddress,
            "cuMemsetD8Async ran over device memory freed after it was queued");
      return;
    }
    std::memset(reinterpret_cast<void*>(static_cast<uintptr_t>(to)), value, bytes);
  });
  return kSuccess;
}
