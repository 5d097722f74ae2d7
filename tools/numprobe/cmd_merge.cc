// numprobe merge -i DIR -o OUT [-config MERGE.yaml]: msprobe's merge_result. The per-rank compare
// results in DIR (msprobe's xlsx or numprobe's csv/json) become
// OUT/multi_ranks_compare_merge_{ts}.xlsx, one sheet per compare index, one column per rank.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "numprobe/app/merge.h"

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

// msprobe spells the config option "-config", a single-dash long name CLI11 cannot declare: it is
// rewritten to --config-path before a parser of the subcommand's own reads the arguments.
int RunMergeArgs(std::vector<std::string> raw) {
  for (std::string& a : raw) {
    if (a == "-config") {
      a = "--config-path";
    } else if (a.rfind("-config=", 0) == 0) {
      a = "--config-path" + a.substr(7);
    }
  }
  MergeOptions o;
  CLI::App parser{"Merge per-rank compare results into one workbook (msprobe's merge_result)",
                  "numprobe merge"};
  parser.add_option("-i,--input_dir", o.input, "folder of compare_result_rank{N}_{ts} files")
      ->required();
  parser.add_option("-o,--output_dir", o.output, "where multi_ranks_compare_merge_{ts}.xlsx goes")
      ->required();
  parser.add_option("--config-path", o.config,
                    "(also -config) YAML naming the APIs (api) and compare indexes "
                    "(compare_index) to merge");
  std::reverse(raw.begin(), raw.end());  // CLI11 parses a reversed vector
  try {
    parser.parse(raw);
  } catch (const CLI::CallForHelp&) {
    std::printf("%s", parser.help().c_str());
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "numprobe merge: %s\nRun 'numprobe merge --help' for the options.\n",
                 e.what());
    return kExitUsage;
  }
  return RunMerge(o);
}

}  // namespace

void SetupMerge(CLI::App& app, int* exit_code) {
  CLI::App* sub = app.add_subcommand(
      "merge", "Merge per-rank compare results into one workbook (msprobe's merge_result)");
  sub->set_help_flag();
  sub->allow_extras();
  sub->prefix_command();
  sub->callback([sub, exit_code] { *exit_code = RunMergeArgs(sub->remaining()); });
}

}  // namespace numprobe::cli
