// Shared pieces of the numprobe command: exit codes and the one-line error report.
#ifndef NUMPROBE_TOOLS_CLI_H_
#define NUMPROBE_TOOLS_CLI_H_

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "numprobe/result.h"
#include "numprobe/status.h"
#include "numprobe/tensor_file.h"

namespace numprobe::cli {

enum ExitCode : int {
  kExitOk = 0,
  kExitFindings = 1,  // a divergence, an anomaly, a difference
  kExitUsage = 2,
  kExitBadInput = 3,  // unreadable or malformed input
};

// Prints "numprobe: error: <message>" on one line to stderr and returns the exit code for it.
int ReportError(const Status& status);
// Prints "numprobe: warning: <message>" on one line to stderr.
void ReportWarning(std::string_view message);
// `error` (a pickle refused in strict mode that inert mode reads) with the advice to use --inert.
Status WithInertNote(const Status& error);
// A pickle refused in strict mode that `read` (the same read, in inert mode) accepts: `error` with
// the advice to use --inert. Any other error is returned as it is.
Status WithInertHint(const Status& error, bool inert,
                     const std::function<bool(const ReadOptions&)>& read);
// --max-memory SIZE of inspect, scan, compare and diff (numprobe/memory_limit.h): its help text,
// and its value in bytes (0 when not given: the library's default, half the physical memory);
// kInvalidArgument for a bad size.
extern const char* const kMaxMemoryHelp;
Result<uint64_t> MaxMemoryBytes(const std::string& text);
// The {ts} of output file names: local time as %Y%m%d%H%M%S.
std::string FileTimestamp();
// Where the numprobe Python package is: NUMPROBE_PYTHONPATH, else the build tree it was built
// in; "" when neither is known (then an installed package is expected).
std::string PackageRoot();
// msprobe's multi-letter single-dash options ("-tp", "-api_info"), which CLI11 cannot declare,
// rewritten to long names: each pair is (msprobe spelling, long name); "-x=v" is rewritten too.
std::vector<std::string> RewriteShortOptions(
    const std::vector<std::string>& args,
    const std::vector<std::pair<std::string, std::string>>& names);

// Subcommands: each binds its options to `app` and sets the callback that sets `*exit_code`.
void SetupInspect(CLI::App& app, int* exit_code);
void SetupCompare(CLI::App& app, int* exit_code);
void SetupRun(CLI::App& app, int* exit_code);
void SetupScan(CLI::App& app, int* exit_code);
// Also takes the run's command after "config-check collect ... --" off argv (shortening *argc).
void SetupConfigCheck(CLI::App& app, int* exit_code, int* argc, char** argv);
void SetupServe(CLI::App& app, int* exit_code);
void SetupReport(CLI::App& app, int* exit_code);
void SetupDiff(CLI::App& app, int* exit_code);
void SetupMerge(CLI::App& app, int* exit_code);
void SetupPrecheck(CLI::App& app, int* exit_code);

// MindSpore graph (kernel-level) dump trees (cmd_mindspore.cc).
bool IsGraphDumpPath(const std::string& path);
int RunGraphCompare(const std::string& target, const std::string& golden, const std::string& output,
                    bool xlsx);
int RunGraphScan(const std::string& root);
int PrintGraphDumpSummary(const std::string& root);

}  // namespace numprobe::cli

#endif  // NUMPROBE_TOOLS_CLI_H_
