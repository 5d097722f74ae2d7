// Text forms shared by the pre-check files: msprobe writes them with Python's csv.writer (UTF-8
// with a byte-order mark, CRLF line ends, minimal quoting) and formats floats as "{:.14f}".
#ifndef NUMPROBE_PRECHECK_PRECHECK_TEXT_H_
#define NUMPROBE_PRECHECK_PRECHECK_TEXT_H_

#include <string>
#include <string_view>
#include <vector>

namespace numprobe::detail {

inline constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";

// Python's "{:.14f}".format(v): "nan", "inf", "-inf" for the non-finite.
std::string Fixed14(double v);

// One CSV line as csv.writer writes it, CRLF included.
std::string CsvLine(const std::vector<std::string>& cells);

}  // namespace numprobe::detail

#endif  // NUMPROBE_PRECHECK_PRECHECK_TEXT_H_
