// Reading CSV as pandas writes it (and as MindSpore's statistic.csv and Python's csv.writer, for
// msprobe's pre-check files, are written): fields separated by commas, quoted with '"' when they
// hold a comma, quote or line break (a quote doubled inside), records ended by \n, \r\n or \r:
// what core/csv.h writes. Parsed by libcsv (libcsv-dev). Malformed quoting is read as libcsv reads
// it: a quote inside an unquoted field is a character (as pandas reads it); text after a closing
// quote keeps that quote as a character and the field quoted (pandas drops the quote), so such a
// field usually ends unclosed.
#ifndef NUMPROBE_CORE_CSV_READ_H_
#define NUMPROBE_CORE_CSV_READ_H_

#include <string>
#include <string_view>
#include <vector>

#include "numprobe/result.h"

namespace numprobe::detail {

// The records of `text`, each a list of fields (a trailing comma gives a last empty field; blank
// lines hold no record; spaces are kept as they are). kCorrupt when a quoted field is not closed.
Result<std::vector<std::vector<std::string>>> ParseCsv(std::string_view text);

}  // namespace numprobe::detail

#endif  // NUMPROBE_CORE_CSV_READ_H_
