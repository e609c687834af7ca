#include "frontend/evaluation_dumps.h"

#include <cstdio>
#include <fstream>
#include <regex>
#include <system_error>

#include "frontend/settings.h"
#include "ir/dot.h"
#include "ir/printer.h"

namespace lz::frontend {

bool dump_directory_usable(const std::string& directory) {
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  if (!error && std::filesystem::is_directory(directory, error)) return true;
  const std::string why = error ? error.message() : "it is not a directory";
  std::fprintf(stderr, "[lazuli] dumping is off: the dump directory %s cannot be used (%s)\n",
               directory.c_str(), why.c_str());
  set_dump_directory("");
  return false;
}

void dump_graph(const std::string& directory, const ir::Graph& graph,
                const EvaluationRecord& record) {
  char prefix[32];
  std::snprintf(prefix, sizeof(prefix), "%04llu.", static_cast<unsigned long long>(record.number));
  const std::filesystem::path base = std::filesystem::path(directory) /
                                     (prefix + std::string(evaluation_reason_name(record.reason)));
  std::ofstream(base.string() + ".lzir")
      << "// evaluation " << record.number << ": " << evaluation_reason_name(record.reason)
      << " at " << record.location << "\n"
      << ir::print_graph(graph);
  std::ofstream(base.string() + ".dot") << ir::graph_to_dot(graph);
}

passes::PassManager::Observer dump_passes(const std::filesystem::path& folder,
                                          const std::string& selected) {
  std::error_code error;
  std::filesystem::create_directories(folder, error);
  return [folder, pattern = std::regex(selected)](int position, std::string_view pass,
                                                  const passes::PassContext& context) {
    if (!std::regex_match(pass.begin(), pass.end(), pattern)) return;
    char name[64];
    std::snprintf(name, sizeof(name), "%04d.%s%.*s.lzir", position, position == 0 ? "" : "after_",
                  static_cast<int>(pass.size()), pass.data());
    std::ofstream(folder / name) << passes::print_context(context);
  };
}

}  // namespace lz::frontend
