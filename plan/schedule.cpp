#include "plan/schedule.h"

#include <string>
#include <unordered_map>
#include <vector>

namespace lz::plan {

std::string print_schedule(const Schedule& schedule) {
  const auto at = [](const std::vector<int>& values, int kernel) {
    return kernel >= 0 && kernel < static_cast<int>(values.size()) ? std::to_string(values[kernel])
                                                                   : std::string("?");
  };
  std::unordered_map<int, std::vector<int>> producers_waited_for;
  for (const auto& wait : schedule.waits) {
    producers_waited_for[wait.kernel].push_back(wait.producer);
  }
  std::string text;
  for (const int kernel : schedule.order) {
    text += "kernel " + std::to_string(kernel) + ": level " + at(schedule.level, kernel) +
            ", stream " + at(schedule.stream, kernel);
    const char* separator = ", waits for ";
    for (const int producer : producers_waited_for[kernel]) {
      text += separator;
      text +=
          "kernel " + std::to_string(producer) + " (stream " + at(schedule.stream, producer) + ")";
      separator = ", ";
    }
    text += "\n";
  }
  return text;
}

}  // namespace lz::plan
