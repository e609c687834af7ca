// Writing LZ_DUMP's files. The first dump that cannot be written (a read-only directory, a full
// disk) turns dumping off for the process with one line on stderr: an unusable dump directory
// costs that line, never an evaluation, and never a file left empty without a word.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace lz::support {

/// Why `folder` cannot hold dumps (it cannot be made, is no directory, or takes no new file),
/// or nothing when it can. Makes the folder and its parents.
std::optional<std::string> dump_folder_problem(const std::filesystem::path& folder);

/// Makes `folder` and its parents, for dumps; false, turning dumping off, when it cannot.
bool make_dump_folder(const std::filesystem::path& folder);

/// Writes `text` to `path`, replacing it; false, turning dumping off, when it was not written
/// whole (or dumping is already off). What was written of it stays, and the line names it.
bool write_dump_file(const std::filesystem::path& path, std::string_view text);

/// Turns dumping off, saying on stderr why, once: "[lazuli] dumping is off: <why>".
void turn_dumping_off(const std::string& why);

/// Whether a failure turned dumping off since the last allow_dumping().
bool dumping_turned_off();

/// Lets dumping run again, for a newly chosen dump directory.
void allow_dumping();

}  // namespace lz::support
