// Reads the first worksheet of an .xlsx workbook (msprobe's compare_result_*.xlsx) into a grid of
// cells. Built on the project's own hardened zip reader (zip.h: sizes, ratios and names checked)
// and Expat (Debian libexpat1-dev), a streaming XML parser: Debian packages no C/C++ xlsx reader
// (FreeXL 1.0 reads only .xls), and an xlsx sheet is a zip of small XML files. Documents with a
// DTD are refused (no entity expansion), and the grid is capped.
#ifndef NUMPROBE_MERGE_XLSX_READER_H_
#define NUMPROBE_MERGE_XLSX_READER_H_

#include <filesystem>
#include <string>
#include <vector>

#include "numprobe/result.h"

namespace numprobe::merge_detail {

struct XlsxCell {
  enum class Kind : uint8_t { kEmpty, kNumber, kText, kBool };
  Kind kind = Kind::kEmpty;
  double number = 0;
  std::string text;
};

// rows[r][c], the first row being the header; short rows are padded with empty cells.
using XlsxGrid = std::vector<std::vector<XlsxCell>>;

// kCorrupt (naming the file and the part) for a broken workbook, kRejected for a DTD,
// kOutOfRange past the caps.
Result<XlsxGrid> ReadXlsxFirstSheet(const std::filesystem::path& path);

}  // namespace numprobe::merge_detail

#endif  // NUMPROBE_MERGE_XLSX_READER_H_
