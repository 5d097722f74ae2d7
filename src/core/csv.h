// CSV as pandas' DataFrame.to_csv writes it (msprobe's tables go through pandas, so numprobe's
// must match byte for byte): a field is quoted only when it holds a comma, a quote or a line
// break, and quotes inside are doubled. Lines end with "\n" unless asked otherwise.
#ifndef NUMPROBE_CORE_CSV_H_
#define NUMPROBE_CORE_CSV_H_

#include <initializer_list>
#include <span>
#include <string>
#include <string_view>

namespace numprobe::detail {

// The bytes that make a field quoted.
constexpr bool IsCsvQuoteByte(char c) { return c == ',' || c == '"' || c == '\n' || c == '\r'; }

// One field, quoted when it must be.
std::string CsvField(std::string_view text);
void AppendCsvField(std::string_view text, std::string* out);

// One line of `cells` ended by `line_end` ("\r\n" for Python's csv.writer, which msprobe's
// pre-check files use), appended to `out`.
void AppendCsvLine(std::span<const std::string> cells, std::string* out,
                   std::string_view line_end = "\n");
std::string CsvLine(std::span<const std::string> cells, std::string_view line_end = "\n");
inline std::string CsvLine(std::initializer_list<std::string> cells,
                           std::string_view line_end = "\n") {
  return CsvLine(std::span<const std::string>(cells.begin(), cells.size()), line_end);
}

}  // namespace numprobe::detail

#endif  // NUMPROBE_CORE_CSV_H_
