// Writing compare tables: msprobe's CSV (pandas' quoting, its value texts) and numprobe's JSON
// twin of the same table (for the UI and scripts). Files are written to a temporary name and
// renamed into place, so an interrupted write never leaves a partial table under the final name.
// Not public API: users call CompareDumpTrees (compare_trees.h), which writes them.
#ifndef NUMPROBE_COMPARE_COMPARE_WRITER_H_
#define NUMPROBE_COMPARE_COMPARE_WRITER_H_

#include <filesystem>
#include <string>
#include <vector>

#include "numprobe/compare.h"
#include "numprobe/status.h"

namespace numprobe {

class ThreadPool;

// msprobe's compare_result CSV. kIoError when the file cannot be written.
Status WriteCompareCsv(const CompareTable& table, const std::filesystem::path& path);

// The JSON twin: {"numprobe_compare": 1, "mode", "target", "golden", "columns": [...],
// "rows": [[cell, ...], ...], "counts": {...}}. Cells are the CSV texts, except plain numbers,
// which are JSON numbers.
Status WriteCompareJson(const CompareTable& table, const std::filesystem::path& path,
                        const std::string& target_label, const std::string& golden_label);

// Both of the above in one pass: each row's cells are formatted once (spread over `pool`, which
// may be null) and written to the CSV and to the JSON twin side by side. The files are those
// the two functions write, byte for byte.
Status WriteCompareCsvAndJson(const CompareTable& table, const std::filesystem::path& csv_path,
                              const std::filesystem::path& json_path,
                              const std::string& target_label, const std::string& golden_label,
                              ThreadPool* pool);

// msprobe's highlighting of an xlsx table, per row: red when an NPU Max/Min is NaN/Inf or Max diff
// (MaxAbsErr) exceeds 1e10, or, comparing an API's outputs with its inputs, when an output's
// MaxRelativeErr exceeds 0.5 (statistics) or the inputs' 1/1000 ratio exceeds 0.9 while the
// output's is below 0.6 (tensor); yellow when an output's error is an order of magnitude above an
// input's (both above 1), its MaxRelativeErr exceeds 0.1 while an input's is below 0.01, its
// 1/1000 ratio or Cosine drops by more than 0.1 from an input's, or requires_grad differs. Red
// wins over yellow. No highlighting in md5 mode.
enum class RowColor : uint8_t { kNone, kYellow, kRed };
std::vector<RowColor> MsprobeHighlights(const CompareTable& table);

// The same table as an .xlsx workbook with msprobe's highlighting (numbers as numbers, Inf as
// "inf\t" as msprobe writes it; tables over Excel's row limit continue on further sheets, and
// highlighting stops past msprobe's 1,048,500 rows). kUnsupported when built without
// libxlsxwriter.
Status WriteCompareXlsx(const CompareTable& table, const std::filesystem::path& path);

}  // namespace numprobe

#endif  // NUMPROBE_COMPARE_COMPARE_WRITER_H_
