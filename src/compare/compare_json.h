// Reading the compare JSON twin (compare_result_*.json), the file WriteCompareJson writes
// (numprobe/compare_writer.h): {"numprobe_compare": 1, "mode", "target", "golden", "columns": [...],
// "rows": [[cell, ...], ...], "counts": {...}}. Streamed from the file: memory does not grow with
// the number of rows (results of a million rows are common).
#ifndef NUMPROBE_COMPARE_COMPARE_JSON_H_
#define NUMPROBE_COMPARE_COMPARE_JSON_H_

#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "numprobe/result.h"

namespace numprobe {

// One cell: a finite number, or a text. NaN and +-inf (never written by numprobe) read as the
// texts "nan", "inf", "-inf", booleans as "True" / "False", null as "".
struct CompareJsonCell {
  bool is_number = false;
  double number = 0;
  std::string_view text;  // valid during the Row call
};

// Receives the table as it streams by.
class CompareJsonTable {
 public:
  virtual ~CompareJsonTable() = default;
  // Once, before any row.
  virtual Status Columns(const std::vector<std::string>& columns) = 0;
  // One row; cells.size() equals the number of columns.
  virtual Status Row(std::span<const CompareJsonCell> cells) = 0;
};

struct CompareJsonInfo {
  std::string mode;    // "statistics", "tensor", "md5" ("" when absent)
  std::string target;  // the dump labels the compare was given
  std::string golden;
};

// kCorrupt (naming the file) for malformed JSON, a file without "numprobe_compare", rows before
// columns, no columns, a row that is not an array, holds a nested value or whose cell count
// differs from the columns'; errors returned by `table` are passed on with the file's name.
Result<CompareJsonInfo> ReadCompareJson(const std::filesystem::path& path, CompareJsonTable& table);

}  // namespace numprobe

#endif  // NUMPROBE_COMPARE_COMPARE_JSON_H_
