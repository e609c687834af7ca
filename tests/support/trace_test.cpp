#include "support/trace.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <latch>
#include <limits>
#include <map>
#include <new>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "lazuli/error.h"

// This program's global operator new counts each thread's allocations, to show that a span
// allocates nothing while no trace runs.
namespace {
thread_local int64_t allocations = 0;
}  // namespace

void* operator new(std::size_t size) {
  ++allocations;
  if (void* memory = std::malloc(size == 0 ? 1 : size)) return memory;
  throw std::bad_alloc();
}
// Not inlined: GCC would see free() of a pointer from operator new and warn of a mismatch.
[[gnu::noinline]] void operator delete(void* memory) noexcept { std::free(memory); }
[[gnu::noinline]] void operator delete(void* memory, std::size_t) noexcept { std::free(memory); }

namespace lz::support::trace {
namespace {

/// A parsed JSON value.
struct Json {
  enum class Kind { Null, Boolean, Number, String, Array, Object };
  Kind kind = Kind::Null;
  bool boolean = false;
  double number = 0;
  std::string text;  // a string's value, or a number as written (exact beyond a double's precision)
  std::vector<Json> array;
  std::map<std::string, Json> object;

  bool has(const std::string& key) const { return kind == Kind::Object && object.count(key) > 0; }
  const Json& at(const std::string& key) const {
    const auto member = object.find(key);
    if (member == object.end()) throw std::runtime_error("JSON object has no \"" + key + "\"");
    return member->second;
  }
};

/// A strict JSON (RFC 8259) parser; throws std::runtime_error naming the offset of the first
/// error. It decodes \u escapes of ASCII only: the trace writer escapes nothing else that way.
class JsonParser {
 public:
  explicit JsonParser(std::string_view text) : text_(text) {}

  Json parse_document() {
    Json value = parse_value();
    skip_whitespace();
    if (position_ != text_.size()) fail("text after the value");
    return value;
  }

 private:
  [[noreturn]] void fail(const std::string& problem) const {
    throw std::runtime_error("invalid JSON at offset " + std::to_string(position_) + ": " +
                             problem);
  }

  bool at_end() const { return position_ == text_.size(); }
  char peek() const { return at_end() ? '\0' : text_[position_]; }
  bool is_digit() const { return peek() >= '0' && peek() <= '9'; }

  bool consume(char expected) {
    if (peek() != expected) return false;
    ++position_;
    return true;
  }

  void expect(char expected) {
    if (!consume(expected)) fail(std::string("expected '") + expected + "'");
  }

  void skip_whitespace() {
    while (peek() == ' ' || peek() == '\n' || peek() == '\r' || peek() == '\t') ++position_;
  }

  Json parse_value() {
    skip_whitespace();
    Json value;
    if (peek() == '{') return parse_object();
    if (peek() == '[') return parse_array();
    if (peek() == '"') {
      value.kind = Json::Kind::String;
      value.text = parse_string();
    } else if (text_.substr(position_, 4) == "true" || text_.substr(position_, 5) == "false") {
      value.kind = Json::Kind::Boolean;
      value.boolean = peek() == 't';
      position_ += value.boolean ? 4 : 5;
    } else if (text_.substr(position_, 4) == "null") {
      position_ += 4;
    } else {
      return parse_number();
    }
    return value;
  }

  Json parse_object() {
    Json object;
    object.kind = Json::Kind::Object;
    expect('{');
    skip_whitespace();
    if (consume('}')) return object;
    do {
      skip_whitespace();
      if (peek() != '"') fail("expected a member name");
      std::string key = parse_string();
      skip_whitespace();
      expect(':');
      object.object[key] = parse_value();
      skip_whitespace();
    } while (consume(','));
    expect('}');
    return object;
  }

  Json parse_array() {
    Json array;
    array.kind = Json::Kind::Array;
    expect('[');
    skip_whitespace();
    if (consume(']')) return array;
    do {
      array.array.push_back(parse_value());
      skip_whitespace();
    } while (consume(','));
    expect(']');
    return array;
  }

  std::string parse_string() {
    expect('"');
    std::string value;
    while (!consume('"')) {
      if (at_end()) fail("unterminated string");
      const char ch = text_[position_++];
      if (static_cast<unsigned char>(ch) < 0x20) fail("unescaped control character in a string");
      if (ch != '\\') {
        value += ch;
        continue;
      }
      if (at_end()) fail("unterminated escape");
      switch (text_[position_++]) {
        case '"': value += '"'; break;
        case '\\': value += '\\'; break;
        case '/': value += '/'; break;
        case 'b': value += '\b'; break;
        case 'f': value += '\f'; break;
        case 'n': value += '\n'; break;
        case 'r': value += '\r'; break;
        case 't': value += '\t'; break;
        case 'u': value += parse_ascii_escape(); break;
        default: fail("invalid escape");
      }
    }
    return value;
  }

  /// The four hex digits after "\u".
  char parse_ascii_escape() {
    if (text_.size() - position_ < 4) fail("short \\u escape");
    unsigned code = 0;
    const auto [end, error] = std::from_chars(&text_[position_], &text_[position_ + 4], code, 16);
    if (error != std::errc() || end != &text_[position_ + 4]) fail("invalid \\u escape");
    if (code >= 0x80) fail("\\u escape beyond ASCII");
    position_ += 4;
    return static_cast<char>(code);
  }

  Json parse_number() {
    const size_t begin = position_;
    consume('-');
    if (!consume('0')) {
      if (!is_digit()) fail("invalid value");
      while (is_digit()) ++position_;
    }
    if (consume('.')) {
      if (!is_digit()) fail("no digit after the decimal point");
      while (is_digit()) ++position_;
    }
    if (consume('e') || consume('E')) {
      if (!consume('+')) consume('-');
      if (!is_digit()) fail("no digit in the exponent");
      while (is_digit()) ++position_;
    }
    Json number;
    number.kind = Json::Kind::Number;
    number.text = std::string(text_.substr(begin, position_ - begin));
    std::from_chars(number.text.data(), number.text.data() + number.text.size(), number.number);
    return number;
  }

  std::string_view text_;
  size_t position_ = 0;
};

std::string read_file(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

Json read_trace(const std::filesystem::path& path) {
  return JsonParser(read_file(path)).parse_document();
}

/// The trace's events of phase `phase` ("X", "i", "s", "f", "M").
std::vector<const Json*> events_of_phase(const Json& trace, const std::string& phase) {
  std::vector<const Json*> events;
  for (const Json& event : trace.at("traceEvents").array) {
    if (event.at("ph").text == phase) events.push_back(&event);
  }
  return events;
}

/// The trace's events of phase `phase` named `name`.
std::vector<const Json*> events_named(const Json& trace, const std::string& phase,
                                      const std::string& name) {
  std::vector<const Json*> events = events_of_phase(trace, phase);
  std::erase_if(events, [&](const Json* event) { return event->at("name").text != name; });
  return events;
}

/// The names of the events other than metadata, sorted.
std::vector<std::string> recorded_names(const Json& trace) {
  std::vector<std::string> names;
  for (const Json& event : trace.at("traceEvents").array) {
    if (event.at("ph").text != "M") names.push_back(event.at("name").text);
  }
  std::sort(names.begin(), names.end());
  return names;
}

/// A trace time in whole nanoseconds (the writer's resolution), so comparisons are exact.
int64_t nanoseconds(const Json& microseconds) { return std::llround(microseconds.number * 1000); }

/// Whether `time` (in microseconds) lies within the span `span`.
bool span_contains(const Json& span, const Json& time) {
  const int64_t begin = nanoseconds(span.at("ts"));
  return begin <= nanoseconds(time) && nanoseconds(time) <= begin + nanoseconds(span.at("dur"));
}

/// Whether `inner` lies within `outer` in time, on the same thread.
bool span_encloses(const Json& outer, const Json& inner) {
  const int64_t outer_end = nanoseconds(outer.at("ts")) + nanoseconds(outer.at("dur"));
  const int64_t inner_end = nanoseconds(inner.at("ts")) + nanoseconds(inner.at("dur"));
  return outer.at("tid").number == inner.at("tid").number && span_contains(outer, inner.at("ts")) &&
         inner_end <= outer_end;
}

/// A file name under the test temporary folder that no other test or run uses.
std::filesystem::path unique_trace_path(const std::string& label) {
  return std::filesystem::path(::testing::TempDir()) /
         ("lazuli_trace_test_" + std::to_string(getpid()) + "_" + label + ".json");
}

/// Leaves no trace running and removes the files the test wrote.
class TraceTest : public ::testing::Test {
 protected:
  void TearDown() override {
    stop();
    for (const std::filesystem::path& path : paths_) std::filesystem::remove(path);
  }

  std::string trace_path(const std::string& label) {
    paths_.push_back(unique_trace_path(label));
    return paths_.back().string();
  }

 private:
  std::vector<std::filesystem::path> paths_;
};

constexpr int64_t kChunksPerWorker = 200;
constexpr const char* kArgumentsSpanName = "arguments \"quoted\" \\ slashed";
constexpr const char* kEscapedText = "quote \" backslash \\ newline \n tab \t bell \x07 end";
constexpr int64_t kMostNegativeInteger = std::numeric_limits<int64_t>::min();

/// One trace, recorded once for all its tests, of a frontend thread that evaluates (nested spans,
/// a launch, an instant, a span with arguments), a stream thread that runs the launched kernel
/// (a flow arrow from the launch), and two pool workers that record spans concurrently. Every
/// thread names itself before the trace starts.
class FourThreadTraceTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    path_ = unique_trace_path("four_threads");
    record_scenario(path_.string());
    try {
      trace_ = read_trace(path_);
    } catch (const std::exception& error) {
      problem_ = error.what();
    }
  }

  static void TearDownTestSuite() { std::filesystem::remove(path_); }

  void SetUp() override { ASSERT_TRUE(trace_.has_value()) << problem_; }

  /// The only span named `name`.
  static const Json& span(const std::string& name) {
    const std::vector<const Json*> spans = events_named(*trace_, "X", name);
    if (spans.size() != 1) {
      throw std::runtime_error(std::to_string(spans.size()) + " spans named \"" + name + "\"");
    }
    return *spans.front();
  }

  static inline std::filesystem::path path_;
  static inline std::optional<Json> trace_;
  static inline std::string problem_;
  static inline std::chrono::steady_clock::duration simplify_duration_;  // of the completed span

 private:
  static void record_scenario(const std::string& path) {
    name_thread("frontend");
    std::latch threads_named(3);
    std::latch trace_started(1);
    std::promise<uint64_t> launched;
    std::future<uint64_t> launched_flow = launched.get_future();
    std::vector<std::thread> threads;
    threads.emplace_back([&] {
      name_thread("stream cpu:1");
      threads_named.count_down();
      trace_started.wait();
      const uint64_t flow = launched_flow.get();
      Span run("kernel", "run kernel 0");
      run.flow_in(flow);
    });
    for (const int worker : {1, 2}) {
      threads.emplace_back([&, worker] {
        name_thread("pool worker " + std::to_string(worker));
        threads_named.count_down();
        trace_started.wait();
        for (int64_t chunk = 0; chunk < kChunksPerWorker; ++chunk) {
          Span span("kernel", "chunk");
          span.arg("chunk", chunk);
        }
      });
    }
    threads_named.wait();
    start(path);
    trace_started.count_down();
    {
      Span evaluate("frontend", "evaluate");
      const auto simplify_begin = std::chrono::steady_clock::now();
      const auto simplify_end = std::chrono::steady_clock::now();
      complete("pass", "simplify", simplify_begin, simplify_end);
      simplify_duration_ = simplify_end - simplify_begin;
      {
        Span pass("pass", "fusion");
        Span compile("compile", "compile kernel 0");
      }
      {
        Span launch("launch", "launch kernel 0");
        const uint64_t flow = new_flow_id();
        launch.flow_out(flow);
        launched.set_value(flow);
      }
      instant("frontend", "wait for kernel 0");
      Span arguments("frontend", kArgumentsSpanName);
      arguments.arg("text", kEscapedText);
      arguments.arg("most negative integer", kMostNegativeInteger);
      arguments.arg("ratio", 0.1);
      arguments.arg("infinite", -std::numeric_limits<double>::infinity());
      arguments.arg("not a number", std::numeric_limits<double>::quiet_NaN());
    }
    for (std::thread& thread : threads) thread.join();
    stop();
  }
};

TEST_F(FourThreadTraceTest, IsAnObjectWithTraceEventsAndDisplayTimeUnit) {
  EXPECT_EQ(trace_->kind, Json::Kind::Object);
  EXPECT_EQ(trace_->at("traceEvents").kind, Json::Kind::Array);
  EXPECT_EQ(trace_->at("displayTimeUnit").text, "ms");
}

TEST_F(FourThreadTraceTest, EverySpanHasNameCategoryTimesAndThread) {
  const std::vector<const Json*> spans = events_of_phase(*trace_, "X");
  // evaluate, simplify, fusion, compile, launch and arguments; run kernel; the workers' chunks.
  EXPECT_EQ(spans.size(), static_cast<size_t>(6 + 1 + 2 * kChunksPerWorker));
  for (const Json* span : spans) {
    for (const char* member : {"name", "cat", "ts", "dur", "pid", "tid"}) {
      ASSERT_TRUE(span->has(member)) << "a span without \"" << member << "\"";
    }
    EXPECT_EQ(span->at("name").kind, Json::Kind::String);
    EXPECT_EQ(span->at("cat").kind, Json::Kind::String);
    EXPECT_EQ(span->at("ts").kind, Json::Kind::Number);
    EXPECT_GE(span->at("ts").number, 0) << span->at("name").text << " began before the trace";
    EXPECT_GE(span->at("dur").number, 0) << span->at("name").text;
    EXPECT_EQ(span->at("pid").text, "1");
    EXPECT_EQ(span->at("tid").kind, Json::Kind::Number);
  }
  EXPECT_EQ(span("compile kernel 0").at("cat").text, "compile");
}

TEST_F(FourThreadTraceTest, NestedSpansLieWithinTheirParentOnTheSameThread) {
  EXPECT_TRUE(span_encloses(span("evaluate"), span("fusion")));
  EXPECT_TRUE(span_encloses(span("fusion"), span("compile kernel 0")));
  EXPECT_TRUE(span_encloses(span("evaluate"), span("launch kernel 0")));
  EXPECT_TRUE(span_encloses(span("evaluate"), span(kArgumentsSpanName)));
  EXPECT_FALSE(span_encloses(span("fusion"), span("launch kernel 0")));
}

TEST_F(FourThreadTraceTest, CompletedSpanHasTheTimesItWasGiven) {
  const Json& simplify = span("simplify");
  EXPECT_EQ(simplify.at("cat").text, "pass");
  EXPECT_EQ(nanoseconds(simplify.at("dur")),
            std::chrono::duration_cast<std::chrono::nanoseconds>(simplify_duration_).count());
  EXPECT_TRUE(span_encloses(span("evaluate"), simplify));
}

TEST_F(FourThreadTraceTest, EachThreadIsNamedByMetadataWithItsTid) {
  std::map<std::string, double> tid_of_name;
  for (const Json* metadata : events_named(*trace_, "M", "thread_name")) {
    EXPECT_EQ(metadata->at("pid").text, "1");
    const auto [named, first] =
        tid_of_name.emplace(metadata->at("args").at("name").text, metadata->at("tid").number);
    EXPECT_TRUE(first) << "thread \"" << named->first << "\" named twice";
  }
  ASSERT_EQ(tid_of_name.size(), size_t{4});
  EXPECT_EQ(tid_of_name["frontend"], span("evaluate").at("tid").number);
  EXPECT_EQ(tid_of_name["stream cpu:1"], span("run kernel 0").at("tid").number);
  std::set<double> chunk_tids;
  for (const Json* chunk : events_named(*trace_, "X", "chunk")) {
    chunk_tids.insert(chunk->at("tid").number);
  }
  EXPECT_EQ(chunk_tids,
            (std::set<double>{tid_of_name["pool worker 1"], tid_of_name["pool worker 2"]}));
  EXPECT_EQ(std::set<double>({tid_of_name["frontend"], tid_of_name["stream cpu:1"],
                              tid_of_name["pool worker 1"], tid_of_name["pool worker 2"]})
                .size(),
            size_t{4})
      << "two threads share a tid";
}

TEST_F(FourThreadTraceTest, EveryWorkerChunkIsKept) {
  std::map<double, std::set<std::string>> chunks_of_tid;
  for (const Json* chunk : events_named(*trace_, "X", "chunk")) {
    chunks_of_tid[chunk->at("tid").number].insert(chunk->at("args").at("chunk").text);
  }
  std::set<std::string> every_chunk;
  for (int64_t chunk = 0; chunk < kChunksPerWorker; ++chunk) {
    every_chunk.insert(std::to_string(chunk));
  }
  ASSERT_EQ(chunks_of_tid.size(), size_t{2});
  for (const auto& [tid, chunks] : chunks_of_tid) EXPECT_EQ(chunks, every_chunk) << "tid " << tid;
}

TEST_F(FourThreadTraceTest, FlowArrowLeavesTheLaunchAndReachesTheKernelRun) {
  const std::vector<const Json*> starts = events_of_phase(*trace_, "s");
  const std::vector<const Json*> ends = events_of_phase(*trace_, "f");
  ASSERT_EQ(starts.size(), size_t{1});
  ASSERT_EQ(ends.size(), size_t{1});
  const Json& start = *starts.front();
  const Json& end = *ends.front();
  EXPECT_EQ(start.at("id").kind, Json::Kind::Number);
  EXPECT_EQ(start.at("id").text, end.at("id").text);
  for (const Json* flow : {&start, &end}) {
    EXPECT_EQ(flow->at("name").text, "launch");
    EXPECT_EQ(flow->at("cat").text, "flow");
    EXPECT_EQ(flow->at("pid").text, "1");
  }
  EXPECT_EQ(end.at("bp").text, "e");
  const Json& launch = span("launch kernel 0");
  const Json& run = span("run kernel 0");
  EXPECT_EQ(start.at("tid").number, launch.at("tid").number);
  EXPECT_TRUE(span_contains(launch, start.at("ts")));
  EXPECT_EQ(end.at("tid").number, run.at("tid").number);
  EXPECT_TRUE(span_contains(run, end.at("ts")));
}

TEST_F(FourThreadTraceTest, ArgumentsKeepTheirValuesThroughEscaping) {
  const Json& args = span(kArgumentsSpanName).at("args");
  EXPECT_EQ(args.at("text").kind, Json::Kind::String);
  EXPECT_EQ(args.at("text").text, kEscapedText);
  EXPECT_EQ(args.at("most negative integer").kind, Json::Kind::Number);
  EXPECT_EQ(args.at("most negative integer").text, std::to_string(kMostNegativeInteger));
  EXPECT_EQ(args.at("ratio").kind, Json::Kind::Number);
  EXPECT_EQ(args.at("ratio").number, 0.1);
  EXPECT_EQ(args.at("infinite").text, "-inf");
  EXPECT_EQ(args.at("not a number").text, "nan");
  EXPECT_EQ(args.object.size(), size_t{5});
  EXPECT_FALSE(span("evaluate").has("args"));
}

TEST_F(FourThreadTraceTest, InstantIsAThreadScopedMarkerOnItsThread) {
  const std::vector<const Json*> instants = events_of_phase(*trace_, "i");
  ASSERT_EQ(instants.size(), size_t{1});
  const Json& instant = *instants.front();
  EXPECT_EQ(instant.at("name").text, "wait for kernel 0");
  EXPECT_EQ(instant.at("cat").text, "frontend");
  EXPECT_EQ(instant.at("s").text, "t");
  EXPECT_EQ(instant.at("pid").text, "1");
  EXPECT_EQ(instant.at("tid").number, span("evaluate").at("tid").number);
  EXPECT_TRUE(span_contains(span("evaluate"), instant.at("ts")));
  EXPECT_FALSE(span_contains(span("launch kernel 0"), instant.at("ts")));
}

TEST_F(TraceTest, SpansWhileNoTraceRunsRecordAndAllocateNothing) {
  ASSERT_FALSE(enabled());
  const int64_t allocations_before = allocations;
  {
    Span span("test", "a span name long enough that a copy of it would need the heap");
    span.arg("text", "an argument long enough that a copy of it would need the heap");
    span.arg("count", int64_t{7});
    span.arg("ratio", 0.5);
    span.flow_out(1);
    span.flow_in(2);
    instant("test", "an instant name long enough that a copy of it would need the heap");
    complete("test", "a completed span's name long enough that a copy would need the heap",
             std::chrono::steady_clock::now(), std::chrono::steady_clock::now());
  }
  const int64_t allocations_after = allocations;
  EXPECT_EQ(allocations_after, allocations_before);

  std::optional<Span> open_before_start;
  open_before_start.emplace("test", "open before the start");
  const std::string path = trace_path("after_untraced_spans");
  start(path);
  { Span traced("test", "traced"); }
  open_before_start.reset();
  stop();
  EXPECT_EQ(recorded_names(read_trace(path)), std::vector<std::string>{"traced"});
}

TEST_F(TraceTest, SpanStillOpenWhenItsTraceStopsIsDropped) {
  const std::string first = trace_path("first");
  const std::string second = trace_path("second");
  start(first);
  std::optional<Span> open_across_stop;
  open_across_stop.emplace("test", "open across stop");
  { Span finished("test", "finished"); }
  stop();
  start(second);
  open_across_stop.reset();
  { Span in_second("test", "in the second trace"); }
  stop();
  EXPECT_EQ(recorded_names(read_trace(first)), std::vector<std::string>{"finished"});
  EXPECT_EQ(recorded_names(read_trace(second)), std::vector<std::string>{"in the second trace"});
}

TEST_F(TraceTest, SecondStartWritesTheFirstTrace) {
  const std::string first = trace_path("first");
  const std::string second = trace_path("second");
  start(first);
  { Span span("test", "in the first trace"); }
  start(second);
  EXPECT_TRUE(enabled());
  EXPECT_EQ(recorded_names(read_trace(first)), std::vector<std::string>{"in the first trace"});
  { Span span("test", "in the second trace"); }
  stop();
  EXPECT_EQ(recorded_names(read_trace(second)), std::vector<std::string>{"in the second trace"});
}

TEST_F(TraceTest, StopTwiceIsHarmless) {
  const std::string path = trace_path("stopped_twice");
  start(path);
  { Span span("test", "only"); }
  stop();
  const std::string written = read_file(path);
  stop();
  EXPECT_FALSE(enabled());
  EXPECT_EQ(read_file(path), written);
  EXPECT_EQ(recorded_names(read_trace(path)), std::vector<std::string>{"only"});
}

TEST_F(TraceTest, StartOnAnUnwritablePathThrowsNamingThePath) {
  const std::string unwritable = "/nonexistent-dir/trace.json";
  try {
    start(unwritable);
    FAIL() << "start(\"" << unwritable << "\") did not throw";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find(unwritable), std::string::npos) << error.what();
  }
  EXPECT_FALSE(enabled());
}

TEST_F(TraceTest, FailedStartWhileATraceRunsStillWritesTheRunningOne) {
  const std::string path = trace_path("running");
  start(path);
  { Span span("test", "before the failed start"); }
  EXPECT_THROW(start("/nonexistent-dir/trace.json"), Error);
  EXPECT_FALSE(enabled());
  EXPECT_EQ(recorded_names(read_trace(path)), std::vector<std::string>{"before the failed start"});
}

// LZ_TRACE is read by the first enabled() of a process, so these run in a fresh one: the
// "threadsafe" death test style re-executes this program for the statement.
TEST(TraceDeathTest, LzTraceStartsATraceThatIsWrittenAtExit) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  // The same name in this process and the re-executed one, which writes it.
  const std::filesystem::path path =
      std::filesystem::path(::testing::TempDir()) / "lazuli_trace_test_from_environment.json";
  std::filesystem::remove(path);
  EXPECT_EXIT(
      {
        setenv("LZ_TRACE", path.c_str(), 1);
        const bool traced = enabled();
        { Span span("test", "traced from LZ_TRACE"); }
        std::exit(traced ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
  EXPECT_EQ(recorded_names(read_trace(path)), std::vector<std::string>{"traced from LZ_TRACE"});
  std::filesystem::remove(path);
}

TEST(TraceDeathTest, LzTraceIsWrittenWhenAnUncaughtErrorEndsTheProgram) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const std::filesystem::path path =
      std::filesystem::path(::testing::TempDir()) / "lazuli_trace_test_terminate.json";
  std::filesystem::remove(path);
  EXPECT_EXIT(
      {
        setenv("LZ_TRACE", path.c_str(), 1);
        if (!enabled()) std::exit(1);
        { Span span("test", "before the uncaught error"); }
        // An exception leaving a thread's function calls std::terminate, as one leaving main does.
        std::thread([] { throw Error("[test] never caught"); }).join();
      },
      ::testing::KilledBySignal(SIGABRT), "");
  EXPECT_EQ(recorded_names(read_trace(path)),
            std::vector<std::string>{"before the uncaught error"});
  std::filesystem::remove(path);
}

TEST(TraceDeathTest, LzTraceOnAnUnwritablePathWarnsOnceAndLeavesTracingOff) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("LZ_TRACE", "/nonexistent-dir/trace.json", 1);
        const bool traced = enabled() || enabled();
        std::exit(traced ? 1 : 0);
      },
      ::testing::ExitedWithCode(0), "^\\[lazuli\\] [^\n]*/nonexistent-dir/trace\\.json[^\n]*\n$");
}

}  // namespace
}  // namespace lz::support::trace
