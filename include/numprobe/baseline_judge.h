// Judging a capture's records live against a golden dump (the capture's bench_path, an
// incremental dump: docs/capture.md). Each tensor leaf of a record is paired with the golden's
// row of the same name and judged as compare judges a row (divergence.h: the error estimate
// from the statistics, or from the md5 checksums when both sides have them, against the
// dtype-aware tolerance; CompareRow::over_tolerance), so that the capture writes tensor files
// only where the run has left the golden behind.
#ifndef NUMPROBE_BASELINE_JUDGE_H_
#define NUMPROBE_BASELINE_JUDGE_H_

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "numprobe/dump.h"
#include "numprobe/json_value.h"
#include "numprobe/result.h"

namespace numprobe {

// One row of a judged record.
struct JudgedRow {
  std::string name;       // the row name, as compare names it
  std::string data_name;  // the leaf's data_name ("" when it has none)
  bool paired = false;    // the golden has a comparable row of this name
  bool over = false;      // its error exceeds its tolerance
  double error = 0;       // NaN when not judged
  double tolerance = 0;   // NaN when not judged
};

class BaselineJudge {
 public:
  // Reads the golden's dump.json (or the capture journal beside it, as compare does). kCorrupt /
  // kNotFound / kIoError from the reader; kInvalidArgument when it is not a statistics or tensor
  // dump.
  static Result<std::unique_ptr<BaselineJudge>> Open(const std::filesystem::path& golden_dump_json);

  // Judges the rows of one record of entry `name`: `part` is what the capture writes into
  // dump.json for it ({"input_args": [...], "input_kwargs": {...}} or {"output": [...]}, ...).
  // Checksums are compared when `md5` is set and the golden has them, statistics otherwise.
  Result<std::vector<JudgedRow>> Judge(std::string_view name, const JsonValue& part,
                                       bool md5) const;

  const std::filesystem::path& golden_path() const { return path_; }

 private:
  BaselineJudge() = default;
  std::filesystem::path path_;
  std::shared_ptr<const DumpFile> golden_;
  // The first golden row of each name (the names live in golden_).
  std::unordered_map<std::string_view, size_t> rows_by_name_;
};

}  // namespace numprobe

#endif  // NUMPROBE_BASELINE_JUDGE_H_
