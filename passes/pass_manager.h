// Runs a pipeline of named passes, times them, and shows the IR between them.
#pragma once

#include <functional>
#include <memory>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "passes/pass.h"

namespace lz::passes {

/// The passes every evaluation runs: they rewrite the graph and form its kernels.
inline constexpr std::string_view kDefaultPipeline = "dce,cse,simplify,dce,fuse";

/// An analysis of the kernels fusion formed: a launch order with levels, streams and waits
/// ("schedule"), for dumps. The executor runs the kernels in the fusion plan's order, reusing
/// memory as it goes (runtime/kernel_executor.h), so an evaluation runs the analysis only when
/// its passes are dumped (LZ_DUMP), and lazuli-opt runs it by default.
inline constexpr std::string_view kAnalysisPipeline = "schedule";

/// `pipeline` followed by the analyses.
inline std::string with_analyses(std::string_view pipeline) {
  return std::string(pipeline) + "," + std::string(kAnalysisPipeline);
}

struct PassTiming {
  std::string pass;
  double milliseconds = 0;
};

class PassManager {
 public:
  /// `pipeline` lists pass names separated by commas. Throws lz::Error for an unknown name.
  explicit PassManager(std::string_view pipeline = kDefaultPipeline);

  /// Skips every pass called `name` (throws for a name that is not a pass).
  void disable(std::string_view name);

  /// Called after each pass that runs, with its position in the pipeline (from 1), for dumps
  /// and `--print-after`. `before` is also called once, with position 0, before the first pass.
  using Observer = std::function<void(int position, std::string_view pass, const PassContext&)>;
  void set_observer(Observer observer) { observer_ = std::move(observer); }

  void run(PassContext& context);

  /// The passes that will run, in order (disabled ones left out).
  std::vector<std::string> pipeline() const;
  /// Wall time of each pass of the last run().
  const std::vector<PassTiming>& timings() const { return timings_; }

 private:
  std::vector<std::unique_ptr<Pass>> passes_;
  std::vector<std::string> disabled_;
  Observer observer_;
  std::vector<PassTiming> timings_;
};

}  // namespace lz::passes
