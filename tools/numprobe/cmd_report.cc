// numprobe report RESULT -o report.html: one self-contained HTML page (the web UI's overview,
// model tree, compare table and charts, with the data embedded) to attach to a bug report.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "numprobe/app/report.h"

#include "cli.h"

namespace numprobe::cli {
namespace {

struct ReportArgs {
  std::string result;
  std::string golden;
  std::string output;
  int tensor_rows = 24;
  int64_t max_rows = ReportOptions{}.max_rows;
};

#if NUMPROBE_WITH_WEBUI
int RunReport(const ReportArgs& args) {
  if (args.tensor_rows < 0 || args.tensor_rows > 1000) {
    return ReportError(Status::InvalidArgument("--tensor-rows must be 0..1000"));
  }
  if (args.max_rows < 1 || args.max_rows > UINT32_MAX) {
    return ReportError(Status::InvalidArgument("--max-rows must be 1..4294967295"));
  }
  ReportOptions options;
  options.golden = args.golden;
  options.tensor_rows = args.tensor_rows;
  options.max_rows = static_cast<uint32_t>(args.max_rows);
  ReportOutcome outcome;
  const Status s = WriteHtmlReport(args.result, args.output, options, &outcome);
  if (!s.ok()) return ReportError(s);
  std::error_code ec;
  const auto size = std::filesystem::file_size(args.output, ec);
  std::printf("wrote %s (%llu bytes)\n", args.output.c_str(),
              static_cast<unsigned long long>(ec ? 0 : size));
  // The page says the same above its table.
  for (const ReportOmission& o : outcome.omitted) {
    std::printf("showing %llu of %llu rows of %s (--max-rows %lld)\n",
                static_cast<unsigned long long>(o.shown), static_cast<unsigned long long>(o.total),
                o.run.empty() ? "the table" : o.run.c_str(), static_cast<long long>(args.max_rows));
  }
  if (!outcome.omitted.empty()) {
    std::printf("open the full result with: numprobe serve %s\n", args.result.c_str());
  }
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
  sub->add_option("--max-rows", args->max_rows,
                  "Rows per compare table the page embeds at most; a larger table embeds the rows "
                  "around the first divergence, the worst and the first rows (default 20000)");
  sub->callback([args, exit_code] { *exit_code = RunReport(*args); });
}

}  // namespace numprobe::cli
