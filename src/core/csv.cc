#include "core/csv.h"

namespace numprobe::detail {
namespace {

// A plain loop: the character-set search of std::string scans the set once per character, and
// this runs for every cell of million-row tables.
bool NeedsQuotes(std::string_view text) {
  for (const char c : text) {
    if (c == ',' || c == '"' || c == '\n' || c == '\r') return true;
  }
  return false;
}

}  // namespace

void AppendCsvField(std::string_view text, std::string* out) {
  if (!NeedsQuotes(text)) {
    out->append(text);
    return;
  }
  out->push_back('"');
  for (const char c : text) {
    if (c == '"') out->push_back('"');
    out->push_back(c);
  }
  out->push_back('"');
}

std::string CsvField(std::string_view text) {
  std::string out;
  AppendCsvField(text, &out);
  return out;
}

void AppendCsvLine(std::span<const std::string> cells, std::string* out,
                   std::string_view line_end) {
  for (size_t i = 0; i < cells.size(); ++i) {
    if (i > 0) out->push_back(',');
    AppendCsvField(cells[i], out);
  }
  out->append(line_end);
}

std::string CsvLine(std::span<const std::string> cells, std::string_view line_end) {
  std::string out;
  AppendCsvLine(cells, &out, line_end);
  return out;
}

}  // namespace numprobe::detail
