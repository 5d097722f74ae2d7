// numprobe merge -i DIR -o OUT [-config MERGE.yaml]: msprobe's merge_result. The per-rank compare
// results in DIR (msprobe's xlsx or numprobe's csv/json) become
// OUT/multi_ranks_compare_merge_{ts}.xlsx, one sheet per compare index, one column per rank.
#include <filesystem>
#include <memory>
#include <string>

#include "numprobe/merge.h"

#include "cli.h"

namespace numprobe::cli {
namespace {

struct MergeOptions {
  std::string input;
  std::string output;
  std::string config;
};

int RunMerge(const MergeOptions& o) {
  if (o.config.empty()) {
    return ReportError(Status::InvalidArgument(
        "merge needs -config MERGE.yaml naming the APIs to merge ({api: [...], compare_index: "
        "[...]})"));
  }
  auto config = LoadMergeConfig(o.config);
  if (!config) return ReportError(config.error());
  auto merged = MergeCompareResults(o.input, *config);
  if (!merged) return ReportError(merged.error());
  for (const std::string& w : merged->warnings) ReportWarning(w);
  std::error_code ec;
  std::filesystem::create_directories(o.output, ec);
  if (ec) return ReportError(Status::IoError(o.output + ": " + ec.message()));
  const std::filesystem::path out =
      std::filesystem::path(o.output) / ("multi_ranks_compare_merge_" + FileTimestamp() + ".xlsx");
  if (Status s = WriteMergedXlsx(*merged, out); !s.ok()) return ReportError(s);
  std::printf("merged %zu ranks, %zu compare indexes, %zu rows: wrote %s\n", merged->ranks.size(),
              merged->sheets.size(),
              merged->sheets.empty() ? size_t{0} : merged->sheets[0].rows.size(),
              out.string().c_str());
  return kExitOk;
}

}  // namespace

void SetupMerge(CLI::App& app, int* exit_code) {
  auto opt = std::make_shared<MergeOptions>();
  CLI::App* sub = app.add_subcommand(
      "merge", "Merge per-rank compare results into one workbook (msprobe's merge_result)");
  sub->add_option("-i,--input_dir", opt->input, "folder of compare_result_rank{N}_{ts} files")
      ->required();
  sub->add_option("-o,--output_dir", opt->output, "where multi_ranks_compare_merge_{ts}.xlsx goes")
      ->required();
  sub->add_option("-config,--config-path", opt->config,
                  "YAML naming the APIs (api) and compare indexes (compare_index) to merge");
  sub->callback([opt, exit_code] { *exit_code = RunMerge(*opt); });
}

}  // namespace numprobe::cli
