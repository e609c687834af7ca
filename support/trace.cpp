#include "support/trace.h"

#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

#include "lazuli/error.h"
#include "support/nvtx.h"

namespace lz::support::trace {
namespace {

using Clock = std::chrono::steady_clock;

using detail::kNoTrace;
// What current_trace holds until the first enabled() has looked at LZ_TRACE.
constexpr uint64_t kEnvironmentUnread = UINT64_MAX;

}  // namespace

// Constant-initialized, so usable during static initialization.
std::atomic<uint64_t> detail::current_trace{kEnvironmentUnread};
using detail::current_trace;

namespace {

std::atomic<uint64_t> last_flow_id{0};
std::atomic<int> last_thread_id{0};

/// The calling thread's tid in traces: small integers, in the order threads first need one.
int this_thread_id() {
  thread_local const int id = last_thread_id.fetch_add(1, std::memory_order_relaxed) + 1;
  return id;
}

enum class Phase : char { Complete = 'X', Instant = 'i', FlowStart = 's', FlowEnd = 'f' };

/// One event of a trace, turned into JSON only when the trace is written.
struct Event {
  Phase phase = Phase::Complete;
  const char* category = "";
  std::string name;
  int thread = 0;
  Clock::time_point time;
  Clock::duration duration{};  // spans only
  uint64_t flow_id = 0;        // flows only
  std::string arguments;       // JSON object members, e.g. "\"nodes\":12,\"pass\":\"fusion\""
};

}  // namespace

/// A span of a running trace, until it ends.
struct detail::OpenSpan {
  uint64_t trace = kNoTrace;
  Event span;
  std::vector<Event> flows;
};

namespace {

/// The state of tracing besides current_trace. Never destroyed: threads may still end spans while
/// static destructors run at exit, after the atexit stop() has written the trace.
struct Collector {
  // Held through start() and stop(), so that one trace is written before the next starts.
  std::mutex control_mutex;
  std::ofstream file;  // open while a trace runs
  std::string path;
  Clock::time_point start_time;
  uint64_t traces_started = 0;
  bool written_when_the_program_ends = false;

  std::mutex events_mutex;  // guards events and thread_names
  std::vector<Event> events;
  // Kept from trace to trace, for threads that name themselves once. An entry per thread that
  // ever named itself: few, and small.
  std::map<int, std::string> thread_names;
};

Collector& collector() {
  static Collector* const instance = new Collector;
  return *instance;
}

/// How many of the collector's mutexes the calling thread holds: a thread that terminates while
/// holding one must not wait for it again to write the trace.
thread_local int trace_locks_held = 0;

/// A lock_guard on one of the collector's mutexes that counts in trace_locks_held.
class TraceLock {
 public:
  explicit TraceLock(std::mutex& mutex) : lock_(mutex) { ++trace_locks_held; }
  ~TraceLock() { --trace_locks_held; }
  TraceLock(const TraceLock&) = delete;
  TraceLock& operator=(const TraceLock&) = delete;

 private:
  std::lock_guard<std::mutex> lock_;
};

/// Keeps the events of trace number `trace`, unless that trace has stopped since they began.
void record(uint64_t trace, Event event, std::vector<Event> flows = {}) {
  Collector& c = collector();
  TraceLock lock(c.events_mutex);
  if (current_trace.load(std::memory_order_relaxed) != trace) return;
  c.events.push_back(std::move(event));
  for (Event& flow : flows) c.events.push_back(std::move(flow));
}

/// Appends `text` as a JSON string literal, quotes included.
void append_json_string(std::string& out, std::string_view text) {
  out += '"';
  for (const char ch : text) {
    switch (ch) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(ch) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(ch));
          out += escaped;
        } else {
          out += ch;
        }
    }
  }
  out += '"';
}

/// Appends `duration` in microseconds, to the nanosecond.
void append_microseconds(std::string& out, Clock::duration duration) {
  const double microseconds = std::chrono::duration<double, std::micro>(duration).count();
  char digits[32];
  out.append(
      digits,
      std::to_chars(digits, digits + sizeof digits, microseconds, std::chars_format::fixed, 3).ptr);
}

/// Appends `"key":` to a span's arguments, after a comma when they hold one already.
void append_argument_key(std::string& arguments, const char* key) {
  if (!arguments.empty()) arguments += ',';
  append_json_string(arguments, key);
  arguments += ':';
}

/// Appends one event as a JSON object, its time relative to the trace's `start_time`.
void append_event(std::string& out, const Event& event, Clock::time_point start_time) {
  out += "{\"ph\":\"";
  out += static_cast<char>(event.phase);
  out += "\",\"cat\":";
  append_json_string(out, event.category);
  out += ",\"name\":";
  append_json_string(out, event.name);
  out += ",\"ts\":";
  append_microseconds(out, event.time - start_time);
  out += ",\"pid\":1,\"tid\":";
  out += std::to_string(event.thread);
  switch (event.phase) {
    case Phase::Complete:
      out += ",\"dur\":";
      append_microseconds(out, event.duration);
      if (!event.arguments.empty()) out += ",\"args\":{" + event.arguments + "}";
      break;
    case Phase::Instant: out += ",\"s\":\"t\""; break;
    case Phase::FlowStart: out += ",\"id\":" + std::to_string(event.flow_id); break;
    // "bp":"e" binds the arrow's end to the slice enclosing it, not to the next one to begin.
    case Phase::FlowEnd: out += ",\"bp\":\"e\",\"id\":" + std::to_string(event.flow_id); break;
  }
  out += '}';
}

/// Writes a Chrome trace in JSON object form: the events, then a name for each thread's track.
void write_trace(std::ostream& file, const std::vector<Event>& events,
                 const std::map<int, std::string>& thread_names, Clock::time_point start_time) {
  file << "{\"traceEvents\":[\n"
       << R"({"ph":"M","name":"process_name","pid":1,"args":{"name":"lazuli"}})";
  std::set<int> threads;
  std::string json;
  for (const Event& event : events) {
    json.clear();
    append_event(json, event, start_time);
    file << ",\n" << json;
    threads.insert(event.thread);
  }
  for (const int thread : threads) {
    const auto named = thread_names.find(thread);
    json.clear();
    append_json_string(
        json, named != thread_names.end() ? named->second : "thread " + std::to_string(thread));
    file << ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":" << thread
         << ",\"args\":{\"name\":" << json << "}}";
  }
  file << "\n],\"displayTimeUnit\":\"ms\"}\n";
}

/// Stops the running trace and writes it. Called with control_mutex held.
void finish_trace(Collector& c) {
  std::vector<Event> events;
  std::map<int, std::string> thread_names;
  {
    TraceLock lock(c.events_mutex);
    current_trace.store(kNoTrace, std::memory_order_relaxed);
    events.swap(c.events);
    thread_names = c.thread_names;
  }
  write_trace(c.file, events, thread_names, c.start_time);
  c.file.close();
  if (!c.file) std::cerr << "[lazuli] writing the trace to " << c.path << " failed\n";
}

std::terminate_handler previous_terminate_handler = nullptr;

/// A program that dies of an uncaught exception is when its trace is wanted most: the trace is
/// written, then the handler that was installed before lazuli's runs (by default, abort). Fatal
/// signals are left alone, as writing a file is not safe in a signal handler; a handler that
/// calls std::exit gets the trace written by the atexit stop().
[[noreturn]] void write_trace_then_terminate() {
  if (trace_locks_held == 0) {
    try {
      stop();
    } catch (...) {  // dying anyway: the trace is lost, the original failure is what matters
    }
  }
  if (previous_terminate_handler != nullptr) previous_terminate_handler();
  std::abort();
}

/// Starts the next trace, to be written to `path`; false, with errno set, when the file cannot be
/// created. Called with control_mutex held and no trace running.
bool begin_trace(Collector& c, const std::string& path) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) return false;
  c.file = std::move(file);
  c.path = path;
  c.start_time = Clock::now();
  current_trace.store(++c.traces_started, std::memory_order_relaxed);
  if (!c.written_when_the_program_ends) {
    std::atexit([] { stop(); });
    previous_terminate_handler = std::set_terminate(write_trace_then_terminate);
    c.written_when_the_program_ends = true;
  }
  return true;
}

/// The first look at LZ_TRACE: starts a trace to it when set. Returns the running trace.
uint64_t start_from_environment() {
  Collector& c = collector();
  TraceLock lock(c.control_mutex);
  if (current_trace.load(std::memory_order_relaxed) != kEnvironmentUnread) {
    return current_trace.load(std::memory_order_relaxed);  // start() or another thread came first
  }
  current_trace.store(kNoTrace, std::memory_order_relaxed);
  const char* path = std::getenv("LZ_TRACE");
  if (path != nullptr && *path != '\0' && !begin_trace(c, path)) {
    std::cerr << "[lazuli] cannot create the trace file LZ_TRACE=" << path << " ("
              << std::strerror(errno) << "); tracing is off\n";
  }
  return current_trace.load(std::memory_order_relaxed);
}

/// The running trace's number, or kNoTrace.
uint64_t running_trace() {
  const uint64_t trace = current_trace.load(std::memory_order_relaxed);
  if (trace == kEnvironmentUnread) [[unlikely]] {
    return start_from_environment();
  }
  return trace;
}

/// An event on the calling thread's track.
Event thread_event(Phase phase, const char* category, std::string_view name,
                   Clock::time_point time) {
  Event event;
  event.phase = phase;
  event.category = category;
  event.name = name;
  event.thread = this_thread_id();
  event.time = time;
  return event;
}

Event flow_event(Phase phase, uint64_t id) {
  Event flow = thread_event(phase, "flow", "launch", Clock::now());
  flow.flow_id = id;
  return flow;
}

}  // namespace

bool enabled() { return running_trace() != kNoTrace; }

void start(const std::string& path) {
  Collector& c = collector();
  TraceLock lock(c.control_mutex);
  // An explicit start overrides LZ_TRACE, even one that fails.
  uint64_t unread = kEnvironmentUnread;
  current_trace.compare_exchange_strong(unread, kNoTrace, std::memory_order_relaxed);
  if (c.file.is_open()) finish_trace(c);
  if (!begin_trace(c, path)) {
    throw Error("[start_trace] cannot create the trace file " + path + ": " + std::strerror(errno));
  }
}

void stop() {
  Collector& c = collector();
  TraceLock lock(c.control_mutex);
  if (c.file.is_open()) finish_trace(c);
}

void name_thread(std::string name) {
  const int thread = this_thread_id();
  Collector& c = collector();
  TraceLock lock(c.events_mutex);
  c.thread_names[thread] = std::move(name);
}

uint64_t new_flow_id() { return last_flow_id.fetch_add(1, std::memory_order_relaxed) + 1; }

void Span::open(const char* category, std::string_view name) {
  std::unique_ptr<detail::OpenSpan> span;
  const uint64_t trace = running_trace();
  if (trace != kNoTrace) {
    span = std::make_unique<detail::OpenSpan>();
    span->trace = trace;
    span->span = thread_event(Phase::Complete, category, name, Clock::now());
  }
  // Last, as nothing after it may throw: a range left open would nest every later one in it.
  if (nvtx::active()) {
    nvtx::push(name);
    nvtx_range_ = true;
  }
  open_ = span.release();
}

void Span::close() {
  if (nvtx_range_) nvtx::pop();
  if (!open_) return;
  const std::unique_ptr<detail::OpenSpan> owned(open_);
  owned->span.duration = Clock::now() - owned->span.time;
  record(owned->trace, std::move(owned->span), std::move(owned->flows));
}

void Span::arg(const char* key, std::string_view value) {
  if (!open_) return;
  append_argument_key(open_->span.arguments, key);
  append_json_string(open_->span.arguments, value);
}

void Span::arg(const char* key, int64_t value) {
  if (!open_) return;
  append_argument_key(open_->span.arguments, key);
  open_->span.arguments += std::to_string(value);
}

void Span::arg(const char* key, double value) {
  if (!open_) return;
  std::string& arguments = open_->span.arguments;
  append_argument_key(arguments, key);
  if (std::isnan(value)) {
    append_json_string(arguments, "nan");
  } else if (std::isinf(value)) {
    append_json_string(arguments, value > 0 ? "inf" : "-inf");
  } else {
    char digits[32];
    arguments.append(digits, std::to_chars(digits, digits + sizeof digits, value).ptr);
  }
}

void Span::flow_out(uint64_t id) {
  if (open_) open_->flows.push_back(flow_event(Phase::FlowStart, id));
}

void Span::flow_in(uint64_t id) {
  if (open_) open_->flows.push_back(flow_event(Phase::FlowEnd, id));
}

void instant(const char* category, std::string_view name) {
  const uint64_t trace = running_trace();
  if (trace == kNoTrace) return;
  record(trace, thread_event(Phase::Instant, category, name, Clock::now()));
}

void complete(const char* category, std::string_view name, Clock::time_point begin,
              Clock::time_point end) {
  const uint64_t trace = running_trace();
  if (trace == kNoTrace) return;
  Event span = thread_event(Phase::Complete, category, name, begin);
  span.duration = end - begin;
  record(trace, std::move(span));
}

}  // namespace lz::support::trace
