#include "numpy_reference.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

extern char** environ;

namespace lazuli_bench {
namespace {

struct ProcessResult {
  int exit_status = -1;
  std::string output;  // stdout; stderr goes to ours
};

/// Runs `arguments` (found on PATH) with `extra_environment` added, collecting stdout.
ProcessResult run_process(const std::vector<std::string>& arguments,
                          const std::vector<std::string>& extra_environment, bool quiet) {
  ProcessResult result;
  int pipe_ends[2];
  if (pipe(pipe_ends) != 0) return result;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_ends[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, pipe_ends[0]);
  posix_spawn_file_actions_addclose(&actions, pipe_ends[1]);
  if (quiet) posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);

  std::vector<char*> argv;
  for (const std::string& argument : arguments) argv.push_back(const_cast<char*>(argument.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  // Our settings replace any the parent has under the same names.
  auto overridden = [&](const char* entry) {
    for (const std::string& extra : extra_environment) {
      const size_t name_length = extra.find('=') + 1;
      if (extra.compare(0, name_length, entry, 0, name_length) == 0) return true;
    }
    return false;
  };
  for (char** entry = environ; *entry != nullptr; ++entry) {
    if (!overridden(*entry)) envp.push_back(*entry);
  }
  for (const std::string& entry : extra_environment)
    envp.push_back(const_cast<char*>(entry.c_str()));
  envp.push_back(nullptr);

  pid_t child = 0;
  const int spawn_error =
      posix_spawnp(&child, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_ends[1]);
  if (spawn_error == 0) {
    char buffer[4096];
    ssize_t count = 0;
    while ((count = read(pipe_ends[0], buffer, sizeof(buffer))) > 0)
      result.output.append(buffer, count);
    int status = 0;
    if (waitpid(child, &status, 0) == child && WIFEXITED(status)) {
      result.exit_status = WEXITSTATUS(status);
    }
  }
  close(pipe_ends[0]);
  return result;
}

std::string dims_text(const lz::Shape& shape) {
  std::string text;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) text += 'x';
    text += std::to_string(shape[i]);
  }
  return text;
}

}  // namespace

bool numpy_available() {
  static const bool available =
      run_process({"python3", "-c", "import numpy"}, {}, /*quiet=*/true).exit_status == 0;
  return available;
}

std::optional<double> numpy_median_milliseconds(const Workload& workload, const Problem& problem,
                                                int warmup, int repeat, int threads) {
  if (!numpy_available()) return std::nullopt;
  std::vector<std::string> arguments = {"python3", LAZULI_BENCH_NUMPY_SCRIPT, workload.name,
                                        std::to_string(warmup), std::to_string(repeat)};
  for (const InputSpec& input : problem.inputs) {
    arguments.push_back(input.name + ":" + dims_text(input.shape) + ":" +
                        std::to_string(input.low) + ":" + std::to_string(input.high));
  }
  const std::string thread_text = std::to_string(threads);
  const ProcessResult result =
      run_process(arguments,
                  {"OMP_NUM_THREADS=" + thread_text, "OPENBLAS_NUM_THREADS=" + thread_text,
                   "MKL_NUM_THREADS=" + thread_text},
                  /*quiet=*/false);
  if (result.exit_status != 0) return std::nullopt;
  // The median is the last line.
  const size_t end = result.output.find_last_not_of("\n");
  if (end == std::string::npos) return std::nullopt;
  const size_t start = result.output.rfind('\n', end);
  const std::string last = result.output.substr(start == std::string::npos ? 0 : start + 1);
  char* parse_end = nullptr;
  const double milliseconds = std::strtod(last.c_str(), &parse_end);
  if (parse_end == last.c_str()) return std::nullopt;
  return milliseconds;
}

}  // namespace lazuli_bench
