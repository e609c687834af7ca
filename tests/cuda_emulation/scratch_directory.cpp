#include "tests/cuda_emulation/scratch_directory.h"

#include <stdlib.h>

#include <atomic>
#include <cstdlib>
#include <stdexcept>
#include <system_error>

namespace lz::cuda_emulation {
namespace {

/// The directory, created at first use and removed with everything in it at exit (shared
/// objects already loaded stay mapped).
class ScratchDirectory {
 public:
  ScratchDirectory() {
    const char* temporary = std::getenv("TMPDIR");
    std::string pattern =
        (std::filesystem::path(temporary != nullptr && *temporary != '\0' ? temporary : "/tmp") /
         "lazuli-cuda-emulation-XXXXXX")
            .string();
    if (mkdtemp(pattern.data()) == nullptr) {
      throw std::runtime_error("cannot create a directory like " + pattern);
    }
    path_ = pattern;
  }
  ~ScratchDirectory() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace

std::filesystem::path scratch_path(const std::string& stem, const std::string& extension) {
  static const ScratchDirectory directory;
  static std::atomic<unsigned> next{0};
  return directory.path() / (stem + std::to_string(next.fetch_add(1)) + extension);
}

}  // namespace lz::cuda_emulation
