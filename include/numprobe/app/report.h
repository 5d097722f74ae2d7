// `numprobe report`: one self-contained HTML file with the web UI's overview, model tree, compare
// table and charts, the data embedded in the page (no server, no network: it opens from disk).
// Tensor histograms and heatmaps are embedded for the rows that matter most (the first
// divergence, the first anomaly and the worst rows), since the tensor files do not travel with
// the report.
#ifndef NUMPROBE_APP_REPORT_H_
#define NUMPROBE_APP_REPORT_H_

#include <cstdint>
#include <filesystem>

#include "numprobe/status.h"

namespace numprobe {

struct ReportOptions {
  std::filesystem::path golden;  // compare `result` (a dump tree) against this dump on the fly
  int tensor_rows = 24;          // rows per run whose tensor detail is embedded
};

// Loads `result` as `numprobe serve` does and writes `out` atomically. kNotFound / kCorrupt from
// loading; kIoError when `out` cannot be written.
Status WriteHtmlReport(const std::filesystem::path& result, const std::filesystem::path& out,
                       const ReportOptions& options = {});

}  // namespace numprobe

#endif  // NUMPROBE_APP_REPORT_H_
