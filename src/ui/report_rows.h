// Which rows of one compare table `numprobe report` embeds when the table is larger than the
// report's cap: a bounded, useful sample instead of every row, so that a 200,000-row result still
// gives a page a browser can open. The full result stays one `numprobe serve` away.
#ifndef NUMPROBE_UI_REPORT_ROWS_H_
#define NUMPROBE_UI_REPORT_ROWS_H_

#include <cstdint>
#include <span>
#include <vector>

#include "ui/workspace.h"

namespace numprobe::ui {

// Rows of `run` to embed, ascending (execution order). All rows when the table holds at most
// `max_rows`; otherwise at most `max_rows` of them, chosen in this order until the cap is reached:
// the rows in `must_keep` (the culprits' rows, the rows whose tensor detail is embedded), the rows
// around the first divergence (or the first anomaly), the worst rows (errors, then warnings, each
// by the table's main metric: lowest Cosine, else the largest value of the first numeric column),
// then the first rows.
std::vector<uint32_t> ReportRows(const Run& run, uint32_t max_rows,
                                 std::span<const uint32_t> must_keep);

}  // namespace numprobe::ui

#endif  // NUMPROBE_UI_REPORT_ROWS_H_
