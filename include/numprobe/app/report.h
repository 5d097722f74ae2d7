// `numprobe report`: one self-contained HTML file with the web UI's overview, model tree, compare
// table and charts, the data embedded in the page (no server, no network: it opens from disk).
// Tensor histograms and heatmaps are embedded for the rows that matter most (the first
// divergence, the first anomaly and the worst rows), since the tensor files do not travel with
// the report.
#ifndef NUMPROBE_APP_REPORT_H_
#define NUMPROBE_APP_REPORT_H_

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "numprobe/status.h"

namespace numprobe {

struct ReportOptions {
  std::filesystem::path golden;  // compare `result` (a dump tree) against this dump on the fly
  int tensor_rows = 24;          // rows per run whose tensor detail is embedded
  // Rows per run (compare table) the page embeds at most; a larger table embeds a sample (the
  // rows around the first divergence, the worst rows, the first rows) and the page says so. The
  // overview's counts and the model tree always cover every row.
  uint32_t max_rows = 20000;
};

// A run whose table the report embeds only in part.
struct ReportOmission {
  std::string run;  // the run's label ("step0/rank1")
  uint64_t shown = 0;
  uint64_t total = 0;
};

// What a report left out, so the caller can say so.
struct ReportOutcome {
  std::vector<ReportOmission> omitted;
};

// Loads `result` as `numprobe serve` does and writes `out` atomically. kNotFound / kCorrupt from
// loading; kIoError when `out` cannot be written. `outcome`, when given, receives the runs
// whose rows were capped.
Status WriteHtmlReport(const std::filesystem::path& result, const std::filesystem::path& out,
                       const ReportOptions& options = {}, ReportOutcome* outcome = nullptr);

}  // namespace numprobe

#endif  // NUMPROBE_APP_REPORT_H_
