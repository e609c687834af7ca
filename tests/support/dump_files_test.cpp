// Writing LZ_DUMP's files: a failure turns dumping off with one line, never an exception.
#include "support/dump_files.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace {

std::filesystem::path fresh_folder(const std::string& name) {
  const std::filesystem::path folder =
      std::filesystem::temp_directory_path() / (name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(folder);
  return folder;
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(DumpFilesTest, AWritableFolderTakesDumpsWhole) {
  const std::filesystem::path folder = fresh_folder("lazuli_dump_files_ok");
  EXPECT_EQ(lz::support::dump_folder_problem(folder / "made" / "too"), std::nullopt);
  EXPECT_TRUE(std::filesystem::is_empty(folder / "made" / "too")) << "the probe file stays";
  const std::string text(100000, 'x');
  EXPECT_TRUE(lz::support::write_dump_file(folder / "made" / "a.lzir", text));
  EXPECT_EQ(read_file(folder / "made" / "a.lzir"), text);
  std::filesystem::remove_all(folder);
}

TEST(DumpFilesTest, AFileOrAFolderThatTakesNoFileIsAProblemNamed) {
  const std::filesystem::path file = fresh_folder("lazuli_dump_files_file");
  std::ofstream(file) << "not a folder";
  EXPECT_NE(lz::support::dump_folder_problem(file), std::nullopt);
  EXPECT_NE(lz::support::dump_folder_problem(file / "below"), std::nullopt);
  std::filesystem::remove(file);
  // /proc exists and is a directory, and nobody, root included, can make a file in it.
  EXPECT_EQ(lz::support::dump_folder_problem("/proc").value_or("").rfind("no file can be made", 0),
            0u);
}

TEST(DumpFilesTest, AFailedWriteTurnsDumpingOffWithOneLineUntilAllowedAgain) {
  lz::support::allow_dumping();
  testing::internal::CaptureStderr();
  // /dev/full takes the open and fails the write, as a full disk does.
  const bool first = lz::support::write_dump_file("/dev/full", std::string(1 << 20, 'x'));
  const bool second = lz::support::write_dump_file("/dev/full", "x");
  const std::string messages = testing::internal::GetCapturedStderr();
  EXPECT_FALSE(first);
  EXPECT_FALSE(second);
  EXPECT_TRUE(lz::support::dumping_turned_off());
  EXPECT_EQ(messages,
            "[lazuli] dumping is off: cannot write /dev/full (No space left on device)\n");

  const std::filesystem::path folder = fresh_folder("lazuli_dump_files_off");
  EXPECT_FALSE(lz::support::make_dump_folder(folder)) << "dumping is off: nothing is made";
  EXPECT_FALSE(std::filesystem::exists(folder));
  lz::support::allow_dumping();
  EXPECT_TRUE(lz::support::make_dump_folder(folder));
  EXPECT_TRUE(lz::support::write_dump_file(folder / "b", "b"));
  std::filesystem::remove_all(folder);
}

}  // namespace
