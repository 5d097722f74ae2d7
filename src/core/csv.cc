#include "core/csv.h"

#include <array>
#include <cstdint>

namespace numprobe::detail {
namespace {

// One table lookup per byte: the character-set search of std::string scans the set once per
// character, and four comparisons per byte were still most of the quoting test, which runs for
// every cell of million-row tables.
constexpr std::array<bool, 256> kNeedsQuotes = [] {
  std::array<bool, 256> needs{};
  for (int c = 0; c < 256; ++c)
    needs[static_cast<size_t>(c)] = IsCsvQuoteByte(static_cast<char>(c));
  return needs;
}();

bool NeedsQuotes(std::string_view text) {
  bool needs = false;  // no early exit: a branch-free loop over cells of a few dozen bytes
  for (const char c : text) needs |= kNeedsQuotes[static_cast<uint8_t>(c)];
  return needs;
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
