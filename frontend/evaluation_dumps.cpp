#include "frontend/evaluation_dumps.h"

#include <cstdio>
#include <regex>
#include <string>

#include "ir/dot.h"
#include "ir/printer.h"
#include "support/dump_files.h"

namespace lz::frontend {

void dump_graph(const std::string& directory, const ir::Graph& graph,
                const EvaluationRecord& record) {
  char prefix[32];
  std::snprintf(prefix, sizeof(prefix), "%04llu.", static_cast<unsigned long long>(record.number));
  const std::filesystem::path base = std::filesystem::path(directory) /
                                     (prefix + std::string(evaluation_reason_name(record.reason)));
  const std::string header = "// evaluation " + std::to_string(record.number) + ": " +
                             evaluation_reason_name(record.reason) + " at " + record.location +
                             "\n";
  // Each is not tried when one before it failed, which turned dumping off.
  (void)(support::make_dump_folder(directory) &&
         support::write_dump_file(base.string() + ".lzir", header + ir::print_graph(graph)) &&
         support::write_dump_file(base.string() + ".dot", ir::graph_to_dot(graph)));
}

passes::PassManager::Observer dump_passes(const std::filesystem::path& folder,
                                          const std::string& selected) {
  support::make_dump_folder(folder);
  return [folder, pattern = std::regex(selected)](int position, std::string_view pass,
                                                  const passes::PassContext& context) {
    if (!std::regex_match(pass.begin(), pass.end(), pattern)) return;
    char name[64];
    std::snprintf(name, sizeof(name), "%04d.%s%.*s.lzir", position, position == 0 ? "" : "after_",
                  static_cast<int>(pass.size()), pass.data());
    support::write_dump_file(folder / name, passes::print_context(context));
  };
}

}  // namespace lz::frontend
