// The fake driver's streams (stream.h: a worker thread each) and events.
#include <chrono>
#include <memory>

#include "tests/cuda_emulation/driver_state.h"

namespace lz::cuda_emulation {
namespace {

constexpr unsigned kStreamNonBlocking = 1;  // CU_STREAM_NON_BLOCKING
constexpr unsigned kEventFlags = 7;  // CU_EVENT_BLOCKING_SYNC | DISABLE_TIMING | INTERPROCESS

std::shared_ptr<EventObject> find_event(CUevent handle) {
  std::lock_guard lock(driver().mutex);
  const auto found = driver().events.find(reinterpret_cast<EventObject*>(handle));
  return found == driver().events.end() ? nullptr : found->second;
}

}  // namespace
}  // namespace lz::cuda_emulation

using namespace lz::cuda_emulation;  // NOLINT: the entry points below are C functions

LZ_EMULATION_EXPORT CUresult cuStreamCreate(CUstream* handle, unsigned flags) {
  Context* context = nullptr;
  if (const CUresult result = enter(context); result != kSuccess) return result;
  if (handle == nullptr || (flags & ~kStreamNonBlocking) != 0) return kErrorInvalidValue;
  auto* stream = new Stream(*context);
  std::lock_guard lock(driver().mutex);
  driver().streams.insert(stream);
  *handle = reinterpret_cast<CUstream>(stream);
  return kSuccess;
}

LZ_EMULATION_EXPORT CUresult cuStreamDestroy_v2(CUstream handle) {
  if (!driver().initialized) return kErrorNotInitialized;
  auto* stream = reinterpret_cast<Stream*>(handle);
  {
    std::lock_guard lock(driver().mutex);
    if (driver().streams.erase(stream) == 0) return kErrorInvalidHandle;
  }
  delete stream;  // runs what is queued first
  return kSuccess;
}

LZ_EMULATION_EXPORT CUresult cuStreamSynchronize(CUstream handle) {
  Stream* stream = nullptr;
  if (const CUresult result = stream_of_call(handle, stream); result != kSuccess) return result;
  stream->synchronize();
  return stream->context().fault.load();
}

LZ_EMULATION_EXPORT CUresult cuStreamWaitEvent(CUstream handle, CUevent event_handle,
                                               unsigned flags) {
  Stream* stream = nullptr;
  if (const CUresult result = stream_of_call(handle, stream); result != kSuccess) return result;
  if (flags > 1) return kErrorInvalidValue;  // CU_EVENT_WAIT_DEFAULT or _EXTERNAL
  const std::shared_ptr<EventObject> event = find_event(event_handle);
  if (event == nullptr) return kErrorInvalidHandle;
  // The record to wait for is the last one queued before this call, as in CUDA.
  const uint64_t record = event->event.last_record();
  if (record == 0) return kSuccess;
  enqueue(*stream, [event, record] { event->event.wait_for(record); });
  return kSuccess;
}

LZ_EMULATION_EXPORT CUresult cuEventCreate(CUevent* handle, unsigned flags) {
  Context* context = nullptr;
  if (const CUresult result = enter(context); result != kSuccess) return result;
  if (handle == nullptr || (flags & ~kEventFlags) != 0) return kErrorInvalidValue;
  auto event = std::make_shared<EventObject>(*context, flags);
  std::lock_guard lock(driver().mutex);
  driver().events.emplace(event.get(), event);
  *handle = reinterpret_cast<CUevent>(event.get());
  return kSuccess;
}

LZ_EMULATION_EXPORT CUresult cuEventDestroy_v2(CUevent handle) {
  if (!driver().initialized) return kErrorNotInitialized;
  std::lock_guard lock(driver().mutex);
  // Queued records and waits hold the event until they have run.
  return driver().events.erase(reinterpret_cast<EventObject*>(handle)) == 1 ? kSuccess
                                                                            : kErrorInvalidHandle;
}

LZ_EMULATION_EXPORT CUresult cuEventRecord(CUevent event_handle, CUstream handle) {
  Stream* stream = nullptr;
  if (const CUresult result = stream_of_call(handle, stream); result != kSuccess) return result;
  const std::shared_ptr<EventObject> event = find_event(event_handle);
  if (event == nullptr) return kErrorInvalidHandle;
  if (&event->context != &stream->context()) {
    report_misuse("cuEventRecord: the event and the stream belong to different devices");
    return kErrorInvalidHandle;
  }
  const uint64_t record = event->event.begin_record();
  // A record runs even after a fault, so that nothing waits for it forever.
  stream->enqueue([event, record] { event->event.complete(record); });
  return kSuccess;
}

LZ_EMULATION_EXPORT CUresult cuEventQuery(CUevent handle) {
  if (!driver().initialized) return kErrorNotInitialized;
  const std::shared_ptr<EventObject> event = find_event(handle);
  if (event == nullptr) return kErrorInvalidHandle;
  return event->event.is_complete() ? event->context.fault.load() : kErrorNotReady;
}

LZ_EMULATION_EXPORT CUresult cuEventSynchronize(CUevent handle) {
  if (!driver().initialized) return kErrorNotInitialized;
  const std::shared_ptr<EventObject> event = find_event(handle);
  if (event == nullptr) return kErrorInvalidHandle;
  event->event.wait_for(event->event.last_record());
  return event->context.fault.load();
}

LZ_EMULATION_EXPORT CUresult cuEventElapsedTime_v2(float* milliseconds, CUevent start_handle,
                                                   CUevent end_handle) {
  if (!driver().initialized) return kErrorNotInitialized;
  if (milliseconds == nullptr) return kErrorInvalidValue;
  const std::shared_ptr<EventObject> start = find_event(start_handle);
  const std::shared_ptr<EventObject> end = find_event(end_handle);
  if (start == nullptr || end == nullptr) return kErrorInvalidHandle;
  if (((start->event.flags() | end->event.flags()) & Event::kDisableTiming) != 0) {
    return kErrorInvalidHandle;
  }
  if (start->event.last_record() == 0 || end->event.last_record() == 0) {
    return kErrorInvalidHandle;
  }
  std::chrono::steady_clock::time_point start_time;
  std::chrono::steady_clock::time_point end_time;
  if (!start->event.completion_time(start_time) || !end->event.completion_time(end_time)) {
    return kErrorNotReady;
  }
  *milliseconds = std::chrono::duration<float, std::milli>(end_time - start_time).count();
  return kSuccess;
}

LZ_EMULATION_EXPORT CUresult cuEventElapsedTime(float* milliseconds, CUevent start, CUevent end) {
  return cuEventElapsedTime_v2(milliseconds, start, end);
}
