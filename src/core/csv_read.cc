#include "core/csv_read.h"

namespace numprobe::detail {

Result<std::vector<std::vector<std::string>>> ParseCsv(std::string_view text) {
  std::vector<std::vector<std::string>> records(1);
  std::string field;
  bool quoted = false;   // inside a quoted field
  bool content = false;  // the current field has begun (a character or a quote)
  bool pending = false;  // a field is due: after a comma, even if it stays empty
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field.push_back('"');
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field.push_back(c);
      }
    } else if (c == '"' && !content) {
      quoted = true;
      content = true;
    } else if (c == ',') {
      records.back().push_back(std::move(field));
      field.clear();
      content = false;
      pending = true;
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      if (content || pending) {  // blank lines hold no record
        records.back().push_back(std::move(field));
        records.emplace_back();
      }
      field.clear();
      content = false;
      pending = false;
    } else {
      field.push_back(c);
      content = true;
    }
  }
  if (quoted) return Status::Corrupt("a quoted CSV field is not closed");
  if (content || pending) records.back().push_back(std::move(field));
  if (records.back().empty()) records.pop_back();
  return records;
}

}  // namespace numprobe::detail
