// A Chrome trace of what lazuli does (lz::start_trace, LZ_TRACE): spans on each thread's track,
// instants, and flow arrows from a launch to the execution it started, written as the Chrome
// Trace Event Format's JSON object form for Perfetto or chrome://tracing.
//
// The hot path is designed for recording every op: while no trace runs, a Span costs a relaxed
// atomic load and a flag read, and allocates nothing. While a trace runs, events are kept in
// memory (a mutex around a vector) and turned into JSON only when the trace is written.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "support/nvtx.h"

namespace lz::support::trace {

/// Whether a trace is being collected: one relaxed atomic load, cheap enough for every recorded
/// op. The first call reads LZ_TRACE and starts a trace to that path when it is set, unless
/// start() came first (a path that cannot be written prints one "[lazuli] ..." line on stderr and
/// leaves tracing off).
bool enabled();

/// Starts collecting, in memory, a trace to be written to `path`; throws lz::Error naming the
/// path when the file cannot be created. Starting while a trace runs writes the running one first.
void start(const std::string& path);

/// Writes the collected events to the trace's path and stops collecting; no effect when no trace
/// runs. Registered with std::atexit and std::set_terminate at the first start, so a trace still
/// running at exit, or when an uncaught exception ends the program, is written.
void stop();

/// Names the calling thread's track ("frontend", "stream cpu:1", "pool worker 2"). Remembered
/// while no trace runs, so a thread can name itself once when it is created.
void name_thread(std::string name);

/// A new id for a flow arrow, unique in the process.
uint64_t new_flow_id();

namespace detail {
struct OpenSpan;
constexpr uint64_t kNoTrace = 0;
/// The running trace's number, kNoTrace while none runs, UINT64_MAX until LZ_TRACE is read: all
/// a Span reads while nothing traces.
extern std::atomic<uint64_t> current_trace;
}  // namespace detail

/// A span on the calling thread's track from construction to destruction (a "ph":"X" event). It
/// belongs to the trace running at its construction: with none, it records and allocates nothing;
/// when that trace stops before the span ends, the span is dropped.
class Span {
 public:
  /// `category` must outlive the trace (a string literal): only the pointer is kept.
  /// Inline, so that a span on the path of every recorded op costs a load while nothing traces.
  Span(const char* category, std::string_view name) {
    if (detail::current_trace.load(std::memory_order_relaxed) != detail::kNoTrace ||
        nvtx::active()) {
      open(category, name);
    }
  }
  ~Span() {
    if (open_ != nullptr || nvtx_range_) close();
  }
  Span(const Span&) = delete;
  Span& operator=(const Span&) = delete;

  /// Attaches an argument shown in the trace viewer's details pane; `key` must be a literal too.
  void arg(const char* key, std::string_view value);
  void arg(const char* key, int64_t value);
  /// A NaN or infinite value is written as the string "nan", "inf" or "-inf" (JSON has no number
  /// for it).
  void arg(const char* key, double value);

  /// Makes this span the start of flow `id`: the arrow leaves from here.
  void flow_out(uint64_t id);
  /// Makes this span the end of flow `id`: the arrow arrives here.
  void flow_in(uint64_t id);

 private:
  void open(const char* category, std::string_view name);
  void close();

  // Owned; a plain pointer, so that the inline destructor needs no complete OpenSpan.
  detail::OpenSpan* open_ = nullptr;  // null when no trace ran at construction
  bool nvtx_range_ = false;           // an NVTX range was opened (support/nvtx.h)
};

/// A zero-duration marker on the calling thread's track ("ph":"i", thread scope); `category` must
/// be a string literal.
void instant(const char* category, std::string_view name);

/// A span on the calling thread's track from `begin` to `end`, for work timed before it could be
/// named (a pass, measured by an observer that only sees pass ends); `category` must be a literal.
void complete(const char* category, std::string_view name,
              std::chrono::steady_clock::time_point begin,
              std::chrono::steady_clock::time_point end);

}  // namespace lz::support::trace
