// A table as msprobe's save_excel writes it: one "Sheet" (then "Sheet2", ... past Excel's row
// limit), the header in the first row, numbers as numbers, Inf as "inf\t", rows filled red or
// yellow. Used by compare's and MindSpore graph compare's --xlsx.
#ifndef NUMPROBE_COMPARE_XLSX_TABLE_H_
#define NUMPROBE_COMPARE_XLSX_TABLE_H_

#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "compare/compare_writer.h"
#include "numprobe/status.h"

namespace numprobe::detail {

struct XlsxTable {
  std::vector<std::string> header;
  size_t rows = 0;
  // The CSV texts of row i (" inf"/" -inf" as msprobe's CSV writes them).
  std::function<std::vector<std::string>(size_t)> cells;
  // The fill of row i; none when unset.
  std::function<RowColor(size_t)> color;
};

// Written atomically; kIoError (with libxlsxwriter's own words) when it cannot be, kUnsupported
// in a build without libxlsxwriter.
Status WriteXlsxTable(const XlsxTable& table, const std::filesystem::path& path);

}  // namespace numprobe::detail

#endif  // NUMPROBE_COMPARE_XLSX_TABLE_H_
