// What the fake driver's entry points share (driver*.cpp): the devices' contexts and memory, and
// the live streams, events, modules and functions, by which a handle is checked before use.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "tests/codegen/cuda_host_emulation.h"
#include "tests/cuda_emulation/device_memory.h"
#include "tests/cuda_emulation/driver.h"
#include "tests/cuda_emulation/kernel_entry.h"
#include "tests/cuda_emulation/stream.h"

namespace lz::cuda_emulation {

struct Function;

struct Module {
  Context* context = nullptr;
  void* library = nullptr;
  std::map<std::string, std::unique_ptr<Function>> functions;  // guarded by Driver::mutex
};

struct Function {
  Module* module = nullptr;
  std::string name;
  EntryThread thread = nullptr;
  const EntryParameters* parameters = nullptr;
};

struct EventObject {
  EventObject(Context& context, unsigned flags) : context(context), event(flags) {}
  Context& context;  // the one current at its creation
  Event event;
};

/// Everything the driver knows; never destroyed, because stream workers may still run at exit.
struct Driver {
  Driver();
  std::atomic<bool> initialized{false};
  std::array<Context, kDeviceCount> contexts;
  DeviceMemory memory;
  std::mutex mutex;  // guards what follows
  std::unordered_set<Stream*> streams;
  std::array<Stream*, kDeviceCount> default_streams{};
  std::unordered_map<EventObject*, std::shared_ptr<EventObject>> events;
  std::unordered_set<Module*> modules;
  std::unordered_set<Function*> functions;
};

Driver& driver();

/// The current context of a call that needs one, or why there is none: kErrorNotInitialized
/// before cuInit, kErrorInvalidContext without a current context, or the context's sticky fault.
CUresult enter(Context*& context);

/// The stream of a call in the current context (`handle` null: the default stream), or why
/// there is none.
CUresult stream_of_call(CUstream handle, Stream*& stream);

/// Queues `operation` on `stream`; it does not run once the stream's context has faulted.
void enqueue(Stream& stream, std::function<void()> operation);

/// Waits until everything queued in `context` (in every context when null) has run.
void synchronize(const Context* context);

/// The CUDA name of `error` ("CUDA_ERROR_INVALID_VALUE") and its description; null for a code
/// the emulation does not know.
const char* error_name(CUresult error);
const char* error_description(CUresult error);

/// `value` as 0x... text.
std::string hex(uint64_t value);

}  // namespace lz::cuda_emulation
