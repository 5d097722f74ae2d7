// numprobe: find where and why two deep-learning runs stop agreeing.
#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>

#include "cli.h"

namespace numprobe::cli {

namespace {

std::string OneLine(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return out;
}

}  // namespace

int ReportError(const Status& status) {
  std::fprintf(stderr, "numprobe: error: %s\n", OneLine(status.message()).c_str());
  return status.code() == ErrorCode::kInvalidArgument ? kExitUsage : kExitBadInput;
}

void ReportWarning(std::string_view message) {
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

}  // namespace numprobe::cli

// CLI11 parse errors are caught below; anything else escaping is a bug and should terminate.
int main(int argc, char** argv) {  // NOLINT(bugprone-exception-escape)
  using numprobe::cli::kExitOk;
  using numprobe::cli::kExitUsage;
  CLI::App app{"numprobe: find where and why two deep-learning runs stop agreeing"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "numprobe 0.1.0");
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
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  }
  return exit_code;
}
