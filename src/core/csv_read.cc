#include "core/csv_read.h"

#include <csv.h>

namespace numprobe::detail {
namespace {

using Records = std::vector<std::vector<std::string>>;

// libcsv trims spaces and tabs around unquoted fields unless told that no character is a space;
// pandas and msprobe write them as data (msprobe's empty cell is " ").
int NoSpaces(unsigned char /*c*/) { return 0; }

void OnField(void* field, size_t size, void* data) {
  static_cast<Records*>(data)->back().emplace_back(
      size == 0 ? std::string() : std::string(static_cast<char*>(field), size));
}

// Called at the end of each record; the next record starts empty.
void OnRecord(int /*terminator*/, void* data) { static_cast<Records*>(data)->emplace_back(); }

// Owns a csv_parser (csv_free on every path out).
class Parser {
 public:
  Parser() : ok_(csv_init(&parser_, 0) == 0) {
    if (ok_) csv_set_space_func(&parser_, &NoSpaces);
  }
  ~Parser() {
    if (ok_) csv_free(&parser_);
  }
  Parser(const Parser&) = delete;
  Parser& operator=(const Parser&) = delete;

  Result<Records> Parse(std::string_view text) {
    if (!ok_) return Status::Internal("csv_init failed");
    Records records(1);
    if (csv_parse(&parser_, text.data(), text.size(), &OnField, &OnRecord, &records) !=
        text.size()) {
      return Error();
    }
    // Lenient while parsing (a quote inside an unquoted field is a character, as pandas reads
    // it), strict at the end: a quoted field still open there is an error, not a last field.
    csv_set_opts(&parser_, CSV_STRICT | CSV_STRICT_FINI);
    if (csv_fini(&parser_, &OnField, &OnRecord, &records) != 0) {
      if (csv_error(&parser_) == CSV_EPARSE) {
        return Status::Corrupt("a quoted CSV field is not closed");
      }
      return Error();
    }
    if (records.back().empty()) records.pop_back();
    return records;
  }

 private:
  Status Error() {  // out of memory, or a field too large for libcsv
    return Status::OutOfRange(std::string("CSV: ") + csv_strerror(csv_error(&parser_)));
  }

  csv_parser parser_{};
  bool ok_;
};

}  // namespace

Result<std::vector<std::vector<std::string>>> ParseCsv(std::string_view text) {
  Parser parser;
  return parser.Parse(text);
}

}  // namespace numprobe::detail
