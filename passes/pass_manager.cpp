#include "passes/pass_manager.h"

#include <algorithm>
#include <chrono>

#include "lazuli/error.h"
#include "support/trace.h"

namespace lz::passes {

PassManager::PassManager(std::string_view pipeline) {
  size_t start = 0;
  while (start <= pipeline.size()) {
    const size_t comma = std::min(pipeline.find(',', start), pipeline.size());
    const std::string_view name = pipeline.substr(start, comma - start);
    if (!name.empty()) passes_.push_back(make_pass(name));
    start = comma + 1;
  }
}

void PassManager::disable(std::string_view name) {
  make_pass(name);  // rejects names that are not passes
  disabled_.emplace_back(name);
}

std::vector<std::string> PassManager::pipeline() const {
  std::vector<std::string> names;
  for (const auto& pass : passes_) {
    if (std::find(disabled_.begin(), disabled_.end(), pass->name()) == disabled_.end()) {
      names.emplace_back(pass->name());
    }
  }
  return names;
}

void PassManager::run(PassContext& context) {
  timings_.clear();
  if (observer_) observer_(0, "input", context);
  int position = 0;
  for (const auto& pass : passes_) {
    if (std::find(disabled_.begin(), disabled_.end(), pass->name()) != disabled_.end()) continue;
    const auto start = std::chrono::steady_clock::now();
    {
      // A live span, so that the pass is an NVTX range in Nsight as well as a trace span.
      support::trace::Span span("pass", pass->name());
      pass->run(context);
    }
    const double elapsed =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    timings_.push_back({std::string(pass->name()), elapsed});
    if (observer_) observer_(++position, pass->name(), context);
  }
}

}  // namespace lz::passes
