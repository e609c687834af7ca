// Inspection: the IR text behind tensors, dumps per evaluation, the log line, traces.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <lazuli/lazuli.h>

#include "ir/parser.h"
#include "support/trace.h"

namespace {

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(InspectTest, IrTextListsOpsWithTheLineThatRecordedThem) {
  const lz::Tensor x = lz::from_vector<float>({1, 2, 3}, {3});
  const int line = __LINE__ + 1;
  const lz::Tensor y = lz::exp(x) * 2;
  const std::string text = lz::ir_text({y});
  EXPECT_NE(text.find("exp(%0)"), std::string::npos) << text;
  EXPECT_NE(text.find("mul("), std::string::npos) << text;
  EXPECT_NE(text.find("inspect_test.cpp\":" + std::to_string(line)), std::string::npos) << text;
  EXPECT_FALSE(y.is_ready()) << "inspecting must not compute";
}

TEST(InspectTest, ANumberSharedByOpsOfSeveralLinesCarriesNoneOfThem) {
  const lz::Tensor x = lz::from_vector<float>({1, 2}, {2});
  const lz::Tensor a = x + 1;
  const lz::Tensor b = x * 2 + 1;  // the same 1, one node for both adds
  const std::string text = lz::ir_text({a, b});
  std::istringstream lines(text);
  int fulls = 0;
  int adds = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.find(" = full(") != std::string::npos) {
      ++fulls;
      EXPECT_EQ(line.find("loc("), std::string::npos) << line;
    }
    if (line.find(" = add(") != std::string::npos) {
      ++adds;
      EXPECT_NE(line.find("inspect_test.cpp"), std::string::npos) << "each add has its line";
    }
  }
  EXPECT_EQ(fulls, 2) << text;  // 1 and 2
  EXPECT_EQ(adds, 2) << text;
}

TEST(InspectTest, IrDotIsADigraph) {
  const lz::Tensor y = lz::ones({2}) + 1;
  const std::string dot = lz::ir_dot({y});
  EXPECT_EQ(dot.rfind("digraph", 0), 0u) << dot;
  EXPECT_NE(dot.find("add"), std::string::npos) << dot;
}

TEST(InspectTest, DumpDirectoryGetsIrAndDotPerEvaluation) {
  const std::filesystem::path directory =
      std::filesystem::temp_directory_path() / ("lazuli_dump_test_" + std::to_string(getpid()));
  std::filesystem::remove_all(directory);
  lz::set_dump_directory(directory.string());
  const lz::Tensor y = lz::sum(lz::arange(0, 5) * 3);
  EXPECT_EQ(y.item<float>(), 30);
  lz::set_dump_directory("");
  char name[32];
  std::snprintf(name, sizeof(name), "%04llu.item",
                static_cast<unsigned long long>(lz::last_evaluation().number));
  const std::string ir = read_file(directory / (std::string(name) + ".lzir"));
  EXPECT_NE(ir.find("sum("), std::string::npos) << ir;
  EXPECT_NE(ir.find("item at "), std::string::npos) << ir;
  EXPECT_NE(read_file(directory / (std::string(name) + ".dot")).find("digraph"), std::string::npos);
  // The recorded graph replays: it parses back (lazuli-opt reads the same format).
  EXPECT_NO_THROW(lz::ir::parse_graph(ir)) << ir;
  // And the context after each pass, numbered in pipeline order.
  const std::string after_fuse = read_file(directory / name / "0005.after_fuse.lzir");
  EXPECT_NE(after_fuse.find("kernel 0"), std::string::npos) << after_fuse;
  EXPECT_NO_THROW(lz::ir::parse_graph(after_fuse)) << "every dump replays:\n" << after_fuse;
  EXPECT_NE(read_file(directory / name / "0000.input.lzir").find("sum("), std::string::npos);
  std::filesystem::remove_all(directory);
}

TEST(InspectTest, AnInvalidDumpPatternIsAnLzErrorSayingWhatIsValid) {
  try {
    lz::set_dump_passes("((");
    FAIL() << "an invalid pattern was taken";
  } catch (const lz::Error& error) {
    const std::string message = error.what();
    EXPECT_EQ(message.rfind("[set_dump_passes] '((' is not a regular expression: ", 0), 0u)
        << message;
    EXPECT_NE(message.find("expected pass names such as \"fuse|schedule\""), std::string::npos)
        << message;
  }
}

TEST(InspectTest, AnUnusableDumpDirectoryIsAnErrorAtTheSetterSayingWhy) {
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("lazuli_dump_file_" + std::to_string(getpid()));
  std::ofstream(file) << "not a folder";
  // A file where the folder should be; a directory nobody can write (a read-only mount).
  for (const std::string& directory : {file.string(), std::string("/proc")}) {
    try {
      lz::set_dump_directory(directory);
      FAIL() << directory << " was taken";
    } catch (const lz::Error& error) {
      const std::string message = error.what();
      EXPECT_EQ(message.rfind("[set_dump_directory] cannot dump into '" + directory + "': ", 0), 0u)
          << message;
      EXPECT_NE(message.find("give a directory lazuli can write, or \"\" to turn dumping off"),
                std::string::npos)
          << message;
    }
  }
  std::filesystem::remove(file);
  EXPECT_EQ((lz::arange(0, 4) + 1).sum().item<float>(), 10) << "a failed setter changes nothing";
}

TEST(InspectTest, ADumpThatCannotBeWrittenTurnsDumpingOffWithOneLine) {
  // A directory that took the setter's probe, then fills up: here the next evaluation's folder
  // is taken by a file, so its dump fails as on a full disk.
  const std::filesystem::path directory =
      std::filesystem::temp_directory_path() / ("lazuli_dump_fails_" + std::to_string(getpid()));
  std::filesystem::remove_all(directory);
  lz::set_dump_directory(directory.string());
  const lz::Tensor x = lz::arange(0, 4);
  x.wait_to_read();
  char name[32];
  std::snprintf(name, sizeof(name), "%04llu.item",
                static_cast<unsigned long long>(lz::last_evaluation().number + 1));
  std::ofstream(directory / name) << "in the way";
  testing::internal::CaptureStderr();
  const float first = (x + 1).sum().item<float>();
  const float second = (x * 2).sum().item<float>();
  const std::string messages = testing::internal::GetCapturedStderr();
  lz::set_dump_directory("");
  EXPECT_EQ(first, 10);   // 1 + 2 + 3 + 4
  EXPECT_EQ(second, 12);  // 0 + 2 + 4 + 6
  // One line naming what failed (the reason is the system's words), none for the second.
  EXPECT_EQ(messages.rfind(
                "[lazuli] dumping is off: cannot make " + (directory / name).string() + " (", 0),
            0u)
      << messages;
  EXPECT_EQ(std::count(messages.begin(), messages.end(), '\n'), 1) << messages;
  std::filesystem::remove_all(directory);
}

TEST(InspectTest, DumpPassesSelectsWhichPassesAreWritten) {
  const std::filesystem::path directory =
      std::filesystem::temp_directory_path() / ("lazuli_dump_passes_" + std::to_string(getpid()));
  std::filesystem::remove_all(directory);
  lz::set_dump_directory(directory.string());
  lz::set_dump_passes("fuse|schedule");
  (lz::arange(0, 5) + 1).wait_to_read();
  lz::set_dump_passes(".*");
  lz::set_dump_directory("");
  char name[32];
  std::snprintf(name, sizeof(name), "%04llu.wait_to_read",
                static_cast<unsigned long long>(lz::last_evaluation().number));
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(directory / name)) {
    files.push_back(entry.path().filename().string());
  }
  std::sort(files.begin(), files.end());
  EXPECT_EQ(files, std::vector<std::string>({"0005.after_fuse.lzir", "0006.after_schedule.lzir"}));
  std::filesystem::remove_all(directory);
}

TEST(InspectTest, InfoLogPrintsOneLinePerEvaluationAndPerKernel) {
  lz::set_log_level(lz::LogLevel::Info);
  const lz::Tensor x = lz::arange(0, 3);
  x.wait_to_read();
  ::testing::internal::CaptureStderr();
  (x * 2).wait_to_read();
  const std::string log = ::testing::internal::GetCapturedStderr();
  lz::set_log_level(lz::LogLevel::Off);
  EXPECT_NE(log.find("[lazuli] evaluation "), std::string::npos) << log;
  EXPECT_NE(log.find("wait_to_read at "), std::string::npos) << log;
  EXPECT_NE(log.find("inspect_test.cpp:"), std::string::npos) << log;
  EXPECT_NE(log.find("nodes=2 kernels=1"), std::string::npos) << "full(2), mul: " << log;
  EXPECT_NE(log.find("[lazuli]   kernel 0 lz_"), std::string::npos) << log;
  EXPECT_NE(log.find("elements=3 inputs=1 outputs=1 ops=2"), std::string::npos) << log;
  EXPECT_NE(log.find("ran on cpu:0"), std::string::npos) << log;
  EXPECT_EQ(std::count(log.begin(), log.end(), '\n'), 3) << "the launch, its one kernel, its run:\n"
                                                         << log;
}

TEST(InspectTest, StartTraceAndStopTraceWriteTheSpansBetweenThem) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / "lazuli_inspect_test_trace.json";
  std::filesystem::remove(path);
  lz::start_trace(path.string());
  EXPECT_TRUE(lz::support::trace::enabled());
  { lz::support::trace::Span span("test", "between start_trace and stop_trace"); }
  lz::stop_trace();
  EXPECT_FALSE(lz::support::trace::enabled());
  EXPECT_NE(read_file(path).find("\"between start_trace and stop_trace\""), std::string::npos)
      << read_file(path);
  EXPECT_THROW(lz::start_trace("/nonexistent-dir/trace.json"), lz::Error);
  std::filesystem::remove(path);
}

}  // namespace
