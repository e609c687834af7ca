// What an evaluation writes under LZ_DUMP before its kernels: its graph (as IR text and Graphviz)
// and, selected by LZ_DUMP_PASSES, the graph after each pass. A file that cannot be written
// turns dumping off (support/dump_files.h).
#pragma once

#include <filesystem>
#include <string>

#include "ir/graph.h"
#include "lazuli/inspect.h"
#include "passes/pass_manager.h"

namespace lz::frontend {

/// Writes the graph an evaluation starts from into `directory`, as IR text (.lzir) and Graphviz
/// (.dot), named by its number and reason.
void dump_graph(const std::string& directory, const ir::Graph& graph,
                const EvaluationRecord& record);

/// Writes the context after each pass whose name matches `selected` into `folder`, numbered in
/// pipeline order ("input", the graph before the first pass, is position 0).
passes::PassManager::Observer dump_passes(const std::filesystem::path& folder,
                                          const std::string& selected);

}  // namespace lz::frontend
