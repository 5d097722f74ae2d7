// numprobe: find where and why two deep-learning runs stop agreeing.
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli.h"
#include "suggest.h"

namespace numprobe::cli {

namespace {

std::string OneLine(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return out;
}

void PrintSubcommands(const CLI::App& app, const std::string& command) {
  std::fprintf(stderr,
               "Usage: %s SUBCOMMAND [OPTIONS]\n\nSubcommands:\n%s\nRun '%s SUBCOMMAND --help' for "
               "its options.\n",
               command.c_str(), SubcommandList(app).c_str(), command.c_str());
}

// CLI11 takes a mistyped subcommand for a stray argument and reports "A subcommand is required";
// the words that must name subcommands are checked here first, so that the message names the
// word and the nearest subcommand. Bare `numprobe` (or `numprobe config-check`) lists them.
std::optional<int> CheckSubcommandWords(const CLI::App& app, int argc, char** argv) {
  const CLI::App* current = &app;
  std::string command = "numprobe";
  bool help = false;
  int i = 1;
  for (; i < argc; ++i) {
    const std::string_view word = argv[i];
    if (word == "-h" || word == "--help") help = true;
    if (word.starts_with("-")) {
      if (current == &app) continue;  // the root's own flags (--help, --version)
      break;
    }
    const std::vector<const CLI::App*> subs = current->get_subcommands({});
    if (subs.empty()) break;
    std::vector<std::string> names;
    const CLI::App* found = nullptr;
    for (const CLI::App* s : subs) {
      names.push_back(s->get_name());
      if (s->get_name() == word) found = s;
    }
    if (found == nullptr) {
      const std::string near = Nearest(word, names);
      const std::string hint = near.empty() ? "" : "; did you mean '" + near + "'?";
      std::fprintf(stderr, "%s: unknown subcommand '%s'%s\n\n", command.c_str(),
                   std::string(word).c_str(), hint.c_str());
      PrintSubcommands(*current, command);
      return kExitUsage;
    }
    current = found;
    command += " " + found->get_name();
  }
  if (argc == 1) {
    PrintSubcommands(app, command);
    return kExitUsage;
  }
  if (i == argc && !help && current != &app && !current->get_subcommands({}).empty()) {
    std::fprintf(stderr, "%s: a subcommand is required\n\n", command.c_str());
    PrintSubcommands(*current, command);
    return kExitUsage;
  }
  return std::nullopt;
}

// The innermost subcommand that was given.
const CLI::App* Innermost(const CLI::App& app) {
  const CLI::App* current = &app;
  while (!current->get_subcommands().empty()) current = current->get_subcommands().front();
  return current;
}

// "numprobe config-check compare" for the app of `config-check compare`.
std::string CommandPath(const CLI::App* app) {
  std::string path;
  for (; app != nullptr && app->get_parent() != nullptr; app = app->get_parent()) {
    path.insert(0, " " + app->get_name());
  }
  return "numprobe" + path;
}

// CLI11 lists unexpected arguments in reverse order ("not expected: fp16 --dtyp"): name the first
// unknown option (or stray argument) instead, with the nearest option of that subcommand.
int ReportExtras(const CLI::App& app) {
  const CLI::App* sub = Innermost(app);
  const std::string command = CommandPath(sub);
  std::vector<std::string> extras = sub->remaining();
  std::string message;
  for (const std::string& e : extras) {
    if (e.size() > 1 && e[0] == '-') {
      message = UnknownOptionText(e, OptionNames(*sub));
      break;
    }
  }
  if (message.empty() && !extras.empty()) message = "unexpected argument '" + extras[0] + "'";
  std::fprintf(stderr, "%s: %s\nRun '%s --help' for the options.\n", command.c_str(),
               message.c_str(), command.c_str());
  return kExitUsage;
}

}  // namespace

// Both flush stdout first: when stdout and stderr go to one file or pipe (a log, the demo), the
// message then stands after the lines printed before it.
int ReportError(const Status& status) {
  std::fflush(stdout);
  std::fprintf(stderr, "numprobe: error: %s\n", OneLine(status.message()).c_str());
  return status.code() == ErrorCode::kInvalidArgument ? kExitUsage : kExitBadInput;
}

Status WithInertNote(const Status& error) {
  return error.WithNote(
      "this file pickles more than tensors (a whole model?): --inert reads its tensors, leaving "
      "the other objects opaque (nothing runs)");
}

Status WithInertHint(const Status& error, bool inert,
                     const std::function<bool(const ReadOptions&)>& read) {
  if (inert || error.code() != ErrorCode::kRejected) return error;
  ReadOptions options;
  options.inert_pickle = true;
  if (!read(options)) return error;
  return WithInertNote(error);
}

void ReportWarning(std::string_view message) {
  std::fflush(stdout);
  std::fprintf(stderr, "numprobe: warning: %s\n", OneLine(message).c_str());
}

std::vector<std::string> RewriteShortOptions(
    const std::vector<std::string>& args,
    const std::vector<std::pair<std::string, std::string>>& names) {
  std::vector<std::string> out;
  for (const std::string& a : args) {
    std::string rewritten = a;
    for (const auto& [brief, full] : names) {
      if (a == brief) {
        rewritten = full;
      } else if (a.rfind(brief + "=", 0) == 0) {
        rewritten = full + a.substr(brief.size());
      }
    }
    out.push_back(rewritten);
  }
  return out;
}

// Under an MPI launcher, a subcommand that has no distributed form and only reads its inputs
// and writes its outputs runs once, on the launcher's rank 0: N copies would write the same
// files N times over each other. The rank is read from the launcher's environment, so MPI is not
// initialised for it. compare, scan and precheck are spread over the processes (docs/cluster.md);
// run (the training under capture) and config-check (a snapshot of each process's environment)
// belong on every process.
bool IsRedundantLauncherCopy(int argc, char** argv) {
  if (argc < 2) return false;
  static const std::set<std::string_view> kOnce = {"diff",  "inspect", "report",
                                                   "serve", "merge",   "precheck-compare"};
  if (kOnce.count(argv[1]) == 0) return false;
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"}) {
    if (const char* rank = std::getenv(name); rank != nullptr && *rank != '\0') {
      return std::string_view(rank) != "0";
    }
  }
  return false;
}

}  // namespace numprobe::cli

// CLI11 parse errors are caught below; anything else escaping is a bug and should terminate.
int main(int argc, char** argv) {  // NOLINT(bugprone-exception-escape)
  using numprobe::cli::kExitOk;
  using numprobe::cli::kExitUsage;
  CLI::App app{"numprobe: find where and why two deep-learning runs stop agreeing"};
  app.require_subcommand(1);
#ifdef NUMPROBE_WITH_MPI
  app.set_version_flag("--version", "numprobe 0.1.0 (mpi: on)");
#else
  app.set_version_flag("--version", "numprobe 0.1.0 (mpi: off)");
#endif
  if (numprobe::cli::IsRedundantLauncherCopy(argc, argv)) return kExitOk;
  int exit_code = kExitOk;
  numprobe::cli::SetupInspect(app, &exit_code);
  numprobe::cli::SetupCompare(app, &exit_code);
  numprobe::cli::SetupRun(app, &exit_code);
  numprobe::cli::SetupScan(app, &exit_code);
  numprobe::cli::SetupConfigCheck(app, &exit_code, &argc, argv);
  numprobe::cli::SetupServe(app, &exit_code);
  numprobe::cli::SetupReport(app, &exit_code);
  numprobe::cli::SetupDiff(app, &exit_code);
  numprobe::cli::SetupMerge(app, &exit_code);
  numprobe::cli::SetupPrecheck(app, &exit_code);
  if (const std::optional<int> code = numprobe::cli::CheckSubcommandWords(app, argc, argv)) {
    return *code;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ExtrasError&) {
    return numprobe::cli::ReportExtras(app);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  }
  return exit_code;
}
