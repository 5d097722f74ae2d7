// msprobe's merge_result: the per-rank compare results of a multi-rank run gathered into one
// workbook, multi_ranks_compare_merge_{ts}.xlsx, with one sheet per compare index (a metric
// column such as "Cosine" or "MaxRelativeErr") and one column per rank, for the APIs a config
// YAML names ({api: [names], compare_index: [columns]}). Inputs are the files of one folder named
// compare_result_rank{N}_{ts}: msprobe's (or numprobe's) .xlsx, numprobe's .csv, or numprobe's
// JSON twin (one file per rank: .xlsx, then .csv, then .json). As msprobe does: a row belongs to
// an API when its NPU Name contains "{api}."; a metric that is N/A, unsupported or Nan becomes
// "NPU:{NPU max}  Bench:{Bench max}"; md5 results are not merged; rows are the union over ranks
// (the first rank's order, then names only later ranks have, as pandas' outer merge leaves them).
#ifndef NUMPROBE_APP_MERGE_H_
#define NUMPROBE_APP_MERGE_H_

#include <filesystem>
#include <string>
#include <vector>

#include "numprobe/result.h"

namespace numprobe {

struct MergeConfig {
  std::vector<std::string> apis;           // "api": required, non-empty
  std::vector<std::string> compare_index;  // "compare_index": empty = every index of the mode
};

// The config YAML. kInvalidArgument (with msprobe's reason) when "api" is missing, empty or not
// a list, or "compare_index" is not a list; kUnsupported without yaml-cpp.
Result<MergeConfig> LoadMergeConfig(const std::filesystem::path& path);

// One merged cell: a number, a text, a boolean, or empty (the API has no such row on that rank).
struct MergeCell {
  enum class Kind : uint8_t { kEmpty, kNumber, kText, kBool };
  Kind kind = Kind::kEmpty;
  double number = 0;
  std::string text;
};

struct MergeSheet {
  std::string index;                         // the sheet's name: the compare index
  std::vector<std::string> columns;          // "NPU Name", "rank0", "rank1", ...
  std::vector<std::vector<MergeCell>> rows;  // [0] is the NPU Name (text)
};

struct MergedResults {
  std::vector<int> ranks;  // merged, in order
  std::vector<MergeSheet> sheets;
  std::vector<std::string> warnings;  // files skipped, APIs not found on a rank, ...
};

// Reads the per-rank results of `input_dir` and merges them. kNotFound when the folder holds
// fewer than two rank results (msprobe: "no need to merge"); kCorrupt / kRejected for a broken
// input file (naming it); kInvalidArgument when no compare index applies to every rank.
Result<MergedResults> MergeCompareResults(const std::filesystem::path& input_dir,
                                          const MergeConfig& config);

// Writes the workbook (kUnsupported without libxlsxwriter). Texts that would act as spreadsheet
// formulas are refused, as msprobe refuses them.
Status WriteMergedXlsx(const MergedResults& merged, const std::filesystem::path& path);

}  // namespace numprobe

#endif  // NUMPROBE_APP_MERGE_H_
