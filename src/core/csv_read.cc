#include "core/csv_read.h"

namespace numprobe::detail {

Result<std::vector<std::vector<std::string>>> ParseCsv(std::string_view text) {
  std::vector<std::vector<std::string>> records(1);
  std::string field;
  bool quoted = false;
  bool field_started = false;
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
    } else if (c == '"' && !field_started) {
      quoted = true;
      field_started = true;
    } else if (c == ',') {
      records.back().push_back(std::move(field));
      field.clear();
      field_started = true;  // a field follows the comma, even an empty last one
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      if (field_started || !records.back().empty()) {  // blank lines hold no record
        records.back().push_back(std::move(field));
        records.emplace_back();
      }
      field.clear();
      field_started = false;
    } else {
      field.push_back(c);
      field_started = true;
    }
  }
  if (quoted) return Status::Corrupt("a quoted CSV field is not closed");
  if (field_started || !records.back().empty()) records.back().push_back(std::move(field));
  if (records.back().empty()) records.pop_back();
  return records;
}

}  // namespace numprobe::detail
