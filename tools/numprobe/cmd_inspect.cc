// numprobe inspect PATH [--json]: tensors, dtypes, shapes and statistics of a file or a folder
// (the library's Inspect, inspect.h), printed as a table or as JSON.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "numprobe/app/inspect.h"

#include "cli.h"

namespace numprobe::cli {
namespace {

namespace fs = std::filesystem;

struct InspectArgs {
  std::string path;
  bool json = false;
  bool inert = false;
  std::string max_memory;
};

int RunInspect(const InspectArgs& args) {
  std::error_code ec;
  if (fs::is_directory(args.path, ec) && !args.json && IsGraphDumpPath(args.path)) {
    // A MindSpore graph dump: its summary first, then its files as for any folder.
    if (const int rc = PrintGraphDumpSummary(args.path); rc != kExitOk) return rc;
  }
  InspectOptions options;
  options.inert_pickle = args.inert;
  auto max_memory = MaxMemoryBytes(args.max_memory);
  if (!max_memory) return ReportError(max_memory.error());
  options.max_memory = *max_memory;
  auto report = Inspect(args.path, options);
  if (!report) return ReportError(report.error());
  // Everything is read before anything is printed, so a bad file never leaves a partial report
  // that looks complete.
  int exit_code = kExitOk;
  for (const InspectMessage& m : report->messages) {
    if (m.is_error()) {
      exit_code = ReportError(m.inert_would_read ? WithInertNote(m.error) : m.error);
    } else {
      ReportWarning(m.warning);
    }
  }
  if (!report->ok()) {
    if (report->folder) {
      std::fprintf(stderr, "numprobe: %zu of %zu files could not be read\n", report->failed,
                   report->candidates);
    }
    return exit_code;
  }
  const std::string text = args.json ? InspectJson(*report) + "\n" : InspectText(*report);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return kExitOk;
}

}  // namespace

void SetupInspect(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<InspectArgs>();
  CLI::App* sub = app.add_subcommand(
      "inspect", "Tensors, dtypes, shapes and statistics of a file or a folder of files");
  sub->add_option("PATH", options->path,
                  "A .npy/.npz/.safetensors/.pt/.pth/.ckpt file, a dump.json, or a folder (tensor "
                  "files and dumps in it, recursively)")
      ->required();
  sub->add_flag("--json", options->json, "Machine-readable output (docs/inspect-json.md)");
  sub->add_flag("--inert", options->inert,
                "Read whole-model pickles: unknown classes become opaque objects (nothing runs)");
  sub->add_option("--max-memory", options->max_memory, kMaxMemoryHelp);
  sub->callback([options, exit_code] { *exit_code = RunInspect(*options); });
}

}  // namespace numprobe::cli
