// numprobe run [--config CONFIG.json] -- COMMAND...: runs an unmodified Python training script
// with capture on (the config: --config, NUMPROBE_CONFIG or MindSpore's MINDSPORE_DUMP_CONFIG). The
// config goes to the child through NUMPROBE_CONFIG and numprobe's boot folder (a sitecustomize that
// starts the debugger) is put first on PYTHONPATH. A COMMAND that is a script (train.py ...) is run
// by the Python interpreter: $NUMPROBE_PYTHON, else the one numprobe was built with, else python3.
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include "numprobe/dump_config.h"

#include "cli.h"

namespace numprobe::cli {

std::string PackageRoot() {
  if (const char* env = std::getenv("NUMPROBE_PYTHONPATH"); env != nullptr && *env != '\0')
    return env;
#ifdef NUMPROBE_PYTHON_BUILD_DIR
  if (std::filesystem::exists(std::filesystem::path(NUMPROBE_PYTHON_BUILD_DIR) / "numprobe")) {
    return NUMPROBE_PYTHON_BUILD_DIR;
  }
#endif
  return "";
}

namespace {

// The interpreter that runs a bare script.
std::string PythonInterpreter() {
  if (const char* env = std::getenv("NUMPROBE_PYTHON"); env != nullptr && *env != '\0') return env;
#ifdef NUMPROBE_PYTHON_EXECUTABLE
  if (std::filesystem::exists(NUMPROBE_PYTHON_EXECUTABLE)) return NUMPROBE_PYTHON_EXECUTABLE;
#endif
  return "python3";
}

struct RunOptions {
  std::string config;
  std::vector<std::string> command;
};

int Run(const RunOptions& opt) {
  std::string config = opt.config;
  if (config.empty()) {
    // MindSpore's MINDSPORE_DUMP_CONFIG (its dump_config.json) is read with the same meaning.
    for (const char* name : {"NUMPROBE_CONFIG", "MINDSPORE_DUMP_CONFIG"}) {
      const char* env = std::getenv(name);
      if (env != nullptr && *env != '\0') {
        config = env;
        break;
      }
    }
    if (config.empty()) {
      return ReportError(Status::InvalidArgument(
          "run needs --config CONFIG.json, NUMPROBE_CONFIG or MINDSPORE_DUMP_CONFIG"));
    }
  }
  // Validate before starting the child, so a typo fails at once with the key named. Warnings are
  // printed by the child's debugger.
  auto parsed = DumpConfig::Load(config);
  if (!parsed.ok()) return ReportError(parsed.error());
  // Without a known package folder, a pip-installed numprobe starts the capture itself
  // (numprobe-autostart.pth reads NUMPROBE_CONFIG, set below whichever variable named the config).
  if (const std::string root = PackageRoot(); !root.empty()) {
    std::string pythonpath = root + "/numprobe/_boot:" + root;
    if (const char* old = std::getenv("PYTHONPATH"); old != nullptr && *old != '\0') {
      pythonpath += ":" + std::string(old);
    }
    ::setenv("PYTHONPATH", pythonpath.c_str(), 1);
  }
  ::setenv("NUMPROBE_CONFIG", std::filesystem::absolute(config).c_str(), 1);
  const pid_t pid = ::fork();
  if (pid < 0)
    return ReportError(Status::IoError(std::string("fork failed: ") + std::strerror(errno)));
  if (pid == 0) {
    std::vector<std::string> command = opt.command;
    if (command.front().ends_with(".py")) command.insert(command.begin(), PythonInterpreter());
    std::vector<char*> argv;
    for (const std::string& a : command) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execvp(argv[0], argv.data());
    std::fprintf(stderr, "numprobe: error: cannot run %s: %s\n", argv[0], std::strerror(errno));
    std::_Exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return ReportError(Status::IoError("waitpid failed"));
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

}  // namespace

void SetupRun(CLI::App& app, int* exit_code) {
  auto opt = std::make_shared<RunOptions>();
  CLI::App* sub = app.add_subcommand(
      "run", "Run a training script unmodified, with capture on: run -- python train.py");
  sub->footer(
      "Example: numprobe run --config c.json -- python train.py   (or: numprobe run --config "
      "c.json train.py)");
  sub->add_option("--config", opt->config,
                  "config.json (msprobe keys) or MindSpore's dump_config.json; default: "
                  "$NUMPROBE_CONFIG, then $MINDSPORE_DUMP_CONFIG");
  sub->add_option("command", opt->command, "the command to run, after --")->required();
  sub->callback([opt, exit_code] { *exit_code = Run(*opt); });
}

}  // namespace numprobe::cli
