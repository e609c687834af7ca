// Where the emulation writes files: the programs the fake NVRTC compiles and the shared objects
// the fake driver loads. One directory per process, under $TMPDIR (or /tmp), removed at exit.
#pragma once

#include <filesystem>
#include <string>

namespace lz::cuda_emulation {

/// A path in this process's scratch directory that no other call returned: `stem`, a number,
/// then `extension`. Throws std::runtime_error when the directory cannot be created.
std::filesystem::path scratch_path(const std::string& stem, const std::string& extension);

}  // namespace lz::cuda_emulation
