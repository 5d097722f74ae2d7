// Writing compare tables: msprobe's CSV (pandas' quoting, its value texts) and numprobe's JSON
// twin of the same table (for the UI and scripts). Files are written to a temporary name and
// renamed into place, so an interrupted write never leaves a partial table under the final name.
#ifndef NUMPROBE_COMPARE_WRITER_H_
#define NUMPROBE_COMPARE_WRITER_H_

#include <filesystem>
#include <string>

#include "numprobe/compare.h"
#include "numprobe/status.h"

namespace numprobe {

// One CSV field as pandas' to_csv writes it (quoted when it holds a comma, quote or newline).
std::string CsvField(std::string_view text);

// msprobe's compare_result CSV. kIoError when the file cannot be written.
Status WriteCompareCsv(const CompareTable& table, const std::filesystem::path& path);

// The JSON twin: {"numprobe_compare": 1, "mode", "target", "golden", "columns": [...],
// "rows": [[cell, ...], ...], "counts": {...}}. Cells are the CSV texts, except plain numbers,
// which are JSON numbers.
Status WriteCompareJson(const CompareTable& table, const std::filesystem::path& path,
                        const std::string& target_label, const std::string& golden_label);

}  // namespace numprobe

#endif  // NUMPROBE_COMPARE_WRITER_H_
