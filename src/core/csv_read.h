// Reading CSV as pandas writes it (and as MindSpore's statistic.csv is written): fields separated
// by commas, quoted with '"' when they hold a comma, quote or newline (a quote doubled inside),
// records ended by \n or \r\n. Written by hand: the dialect is small, the project writes it
// itself (compare_writer.h), and no packaged reader would be simpler than this loop.
#ifndef NUMPROBE_CORE_CSV_READ_H_
#define NUMPROBE_CORE_CSV_READ_H_

#include <string>
#include <string_view>
#include <vector>

#include "numprobe/result.h"

namespace numprobe::detail {

// The records of `text`, each a list of fields (a trailing comma gives a last empty field).
// kCorrupt when a quoted field is not closed.
Result<std::vector<std::vector<std::string>>> ParseCsv(std::string_view text);

}  // namespace numprobe::detail

#endif  // NUMPROBE_CORE_CSV_READ_H_
