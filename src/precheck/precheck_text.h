// Text forms shared by the pre-check files: msprobe writes them with Python's csv.writer (UTF-8
// with a byte-order mark, CRLF line ends, minimal quoting) and formats floats as "{:.14f}".
#ifndef NUMPROBE_PRECHECK_PRECHECK_TEXT_H_
#define NUMPROBE_PRECHECK_PRECHECK_TEXT_H_

#include <string>
#include <string_view>
#include <vector>

#include "core/csv.h"

namespace numprobe::detail {

inline constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";

// Python's "{:.14f}".format(v): "nan", "inf", "-inf" for the non-finite.
std::string Fixed14(double v);

// One CSV line as csv.writer writes it (core/csv.h's minimal quoting), CRLF included.
inline std::string CsvWriterLine(const std::vector<std::string>& cells) {
  return CsvLine(cells, "\r\n");
}

}  // namespace numprobe::detail

#endif  // NUMPROBE_PRECHECK_PRECHECK_TEXT_H_
