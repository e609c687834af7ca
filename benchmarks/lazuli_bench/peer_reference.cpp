#include "peer_reference.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <vector>

extern char** environ;

namespace lazuli_bench {

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

namespace {

std::string dims_text(const lz::Shape& shape) {
  std::string text;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) text += 'x';
    text += std::to_string(shape[i]);
  }
  return text;
}

/// A file in the temporary directory that is removed with this object.
class TemporaryFile {
 public:
  explicit TemporaryFile(const std::string& stem) {
    std::string pattern = (std::filesystem::temp_directory_path() / (stem + "-XXXXXX")).string();
    const int descriptor = mkstemp(pattern.data());
    if (descriptor >= 0) {
      close(descriptor);
      path_ = pattern;
    }
  }
  ~TemporaryFile() {
    if (!path_.empty()) std::filesystem::remove(path_);
  }
  TemporaryFile(const TemporaryFile&) = delete;
  TemporaryFile& operator=(const TemporaryFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

/// The median on the last line of `output`, if it is a number.
std::optional<double> last_number(const std::string& output) {
  const size_t end = output.find_last_not_of("\n");
  if (end == std::string::npos) return std::nullopt;
  const size_t start = output.rfind('\n', end);
  const std::string last = output.substr(start == std::string::npos ? 0 : start + 1);
  char* parse_end = nullptr;
  const double value = std::strtod(last.c_str(), &parse_end);
  if (parse_end == last.c_str()) return std::nullopt;
  return value;
}

}  // namespace

const std::vector<std::string>& peer_frameworks() {
  static const std::vector<std::string> frameworks = {"jax", "torch", "torch.compile", "drjit"};
  return frameworks;
}

bool numpy_available(const std::string& python) {
  static std::mutex mutex;
  static std::map<std::string, bool> available;
  std::lock_guard lock(mutex);
  const auto found = available.find(python);
  if (found != available.end()) return found->second;
  const bool importable =
      run_process({python, "-c", "import numpy"}, {}, /*quiet=*/true).exit_status == 0;
  return available[python] = importable;
}

PeerRun run_peer(const std::string& python, const std::string& framework,
                 const std::string& workload, const Problem& problem,
                 const std::vector<std::vector<float>>& data, int warmup, int repeat, int threads) {
  PeerRun run;
  if (!numpy_available(python)) {
    run.problem = "numpy not installed for " + python;
    return run;
  }
  const TemporaryFile inputs("lazuli-bench-inputs");
  const TemporaryFile output("lazuli-bench-output");
  {
    std::ofstream file(inputs.path(), std::ios::binary);
    for (const std::vector<float>& values : data) {
      file.write(reinterpret_cast<const char*>(values.data()),
                 static_cast<std::streamsize>(values.size() * sizeof(float)));
    }
    if (!file) {
      run.problem = "could not write the inputs for " + framework;
      return run;
    }
  }
  std::vector<std::string> arguments = {python,
                                        LAZULI_BENCH_PEER_SCRIPT,
                                        framework,
                                        workload,
                                        std::to_string(warmup),
                                        std::to_string(repeat),
                                        std::to_string(threads),
                                        inputs.path(),
                                        output.path()};
  for (const InputSpec& input : problem.inputs) arguments.push_back(dims_text(input.shape));
  const std::string thread_text = std::to_string(threads);
  const ProcessResult result =
      run_process(arguments,
                  {"OMP_NUM_THREADS=" + thread_text, "OPENBLAS_NUM_THREADS=" + thread_text,
                   "MKL_NUM_THREADS=" + thread_text},
                  /*quiet=*/true);
  if (result.exit_status == 3) {
    run.problem = framework + " not installed";
    return run;
  }
  if (result.exit_status == 4) {
    run.problem = "no " + framework + " form of this workload";
    return run;
  }
  run.median_ms = result.exit_status == 0 ? last_number(result.output) : std::nullopt;
  if (!run.median_ms) {
    run.problem = framework + (result.exit_status < 0 ? " crashed" : " failed") +
                  " (run peer_reference.py by hand to see why)";
    return run;
  }
  std::ifstream file(output.path(), std::ios::binary | std::ios::ate);
  const auto bytes = static_cast<size_t>(file.tellg());
  run.output.resize(bytes / sizeof(float));
  file.seekg(0);
  file.read(reinterpret_cast<char*>(run.output.data()), static_cast<std::streamsize>(bytes));
  return run;
}

}  // namespace lazuli_bench
