#include "support/dump_files.h"

#include <unistd.h>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <system_error>

namespace lz::support {
namespace {

std::atomic<bool> turned_off{false};

}  // namespace

std::optional<std::string> dump_folder_problem(const std::filesystem::path& folder) {
  std::error_code error;
  std::filesystem::create_directories(folder, error);
  if (error) return error.message();
  if (!std::filesystem::is_directory(folder, error)) return std::string("it is not a directory");
  // Permissions do not tell (root may write anywhere, a read-only mount refuses everyone): a
  // file made and removed does.
  const std::filesystem::path probe = folder / (".lazuli_probe_" + std::to_string(::getpid()));
  std::FILE* file = std::fopen(probe.c_str(), "wb");
  if (file == nullptr) return "no file can be made in it: " + std::string(std::strerror(errno));
  std::fclose(file);
  std::filesystem::remove(probe, error);
  return std::nullopt;
}

bool make_dump_folder(const std::filesystem::path& folder) {
  if (dumping_turned_off()) return false;
  std::error_code error;
  std::filesystem::create_directories(folder, error);
  if (!error) return true;
  turn_dumping_off("cannot make " + folder.string() + " (" + error.message() + ")");
  return false;
}

bool write_dump_file(const std::filesystem::path& path, std::string_view text) {
  if (dumping_turned_off()) return false;
  std::ofstream out(path, std::ios::binary);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  out.close();
  if (out) return true;
  const int reason = errno;
  turn_dumping_off("cannot write " + path.string() + " (" +
                   (reason != 0 ? std::strerror(reason) : "write failed") + ")");
  return false;
}

void turn_dumping_off(const std::string& why) {
  if (turned_off.exchange(true)) return;
  const std::string line = "[lazuli] dumping is off: " + why + "\n";
  std::fputs(line.c_str(), stderr);  // one write: no interleaving with threads
}

bool dumping_turned_off() { return turned_off.load(std::memory_order_relaxed); }

void allow_dumping() { turned_off.store(false, std::memory_order_relaxed); }

}  // namespace lz::support
