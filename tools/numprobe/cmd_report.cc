// numprobe report RESULT -o report.html: one self-contained HTML page (the web UI's overview,
// model tree, compare table and charts, with the data embedded) to attach to a bug report.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "cli.h"

#if NUMPROBE_WITH_WEBUI
#include "numprobe/app/report.h"
#endif

namespace numprobe::cli {
namespace {

struct ReportArgs {
  std::string result;
  std::string golden;
  std::string output;
  int tensor_rows = 24;
};

#if NUMPROBE_WITH_WEBUI
int RunReport(const ReportArgs& args) {
  if (args.tensor_rows < 0 || args.tensor_rows > 1000) {
    return ReportError(Status::InvalidArgument("--tensor-rows must be 0..1000"));
  }
  ReportOptions options;
  options.golden = args.golden;
  options.tensor_rows = args.tensor_rows;
  const Status s = WriteHtmlReport(args.result, args.output, options);
  if (!s.ok()) return ReportError(s);
  std::error_code ec;
  const auto size = std::filesystem::file_size(args.output, ec);
  std::printf("wrote %s (%llu bytes)\n", args.output.c_str(),
              static_cast<unsigned long long>(ec ? 0 : size));
  return kExitOk;
}
#else
int RunReport(const ReportArgs&) {
  return ReportError(Status::InvalidArgument(
      "this numprobe was built without the web UI (configure with -DNUMPROBE_WITH_WEBUI=ON)"));
}
#endif

}  // namespace

void SetupReport(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<ReportArgs>();
  CLI::App* sub = app.add_subcommand(
      "report", "Write one self-contained HTML report (overview, model tree, table, charts)");
  sub->add_option("RESULT", args->result,
                  "A compare output folder or result file, a scan output, or a dump tree")
      ->required();
  sub->add_option("-o,--output", args->output, "The HTML file to write")->required();
  sub->add_option("--golden,-g", args->golden,
                  "A golden dump tree: compare RESULT (a dump tree) against it first");
  sub->add_option("--tensor-rows", args->tensor_rows,
                  "Rows per run whose tensor histograms are embedded (default 24)");
  sub->callback([args, exit_code] { *exit_code = RunReport(*args); });
}

}  // namespace numprobe::cli
