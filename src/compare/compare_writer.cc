#include "compare/compare_writer.h"

#include <cmath>
#include <cstdio>

#include <fmt/format.h>
#include <rapidjson/stringbuffer.h>

#include "core/atomic_file.h"
#include "core/csv.h"
#include "core/json_writer.h"
#include "core/py_format.h"

namespace numprobe {
namespace fs = std::filesystem;

namespace {

// True when `s` is a number in JSON's grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
bool IsJsonNumber(std::string_view s) {
  size_t i = 0;
  auto digits = [&] {
    const size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i > start;
  };
  if (i < s.size() && s[i] == '-') ++i;
  if (i < s.size() && s[i] == '0') {
    ++i;
  } else if (!digits()) {
    return false;
  }
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (!digits()) return false;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == s.size();
}

}  // namespace

Status WriteCompareCsv(const CompareTable& table, const fs::path& path) {
  NUMPROBE_ASSIGN_OR_RETURN(detail::CsvFileWriter file, detail::CsvFileWriter::Create(path));
  NUMPROBE_RETURN_IF_ERROR(file.Line(table.Header()));
  std::vector<std::string> cells;
  for (size_t i = 0; i < table.rows.size(); ++i) {
    table.CsvCells(i, &cells);
    NUMPROBE_RETURN_IF_ERROR(file.Line(cells));
  }
  return file.Commit();
}

Status WriteCompareJson(const CompareTable& table, const fs::path& path,
                        const std::string& target_label, const std::string& golden_label) {
  NUMPROBE_ASSIGN_OR_RETURN(detail::AtomicOutput file, detail::AtomicOutput::Create(path));
  rapidjson::StringBuffer stream;
  JsonWriter<rapidjson::StringBuffer> w(stream, JsonFileKind::kResult);
  auto flush = [&] {
    const Status written = file.Write(std::string_view(stream.GetString(), stream.GetSize()));
    stream.Clear();
    return written;
  };
  auto str = [&](const std::string& s) { w.String(s); };
  w.StartObject();
  w.Key("numprobe_compare");
  w.Int(1);
  w.Key("mode");
  str(std::string(EnumName(table.mode)));
  w.Key("target");
  str(target_label);
  w.Key("golden");
  str(golden_label);
  w.Key("columns");
  w.StartArray();
  for (const std::string& h : table.Header()) str(h);
  w.EndArray();
  std::array<int64_t, std::size(kVerdictNames)> counts{};  // by Verdict
  w.Key("rows");
  w.StartArray();
  std::vector<std::string> cells;
  for (size_t i = 0; i < table.rows.size(); ++i) {
    ++counts[static_cast<size_t>(table.rows[i].result)];
    w.StartArray();
    table.CsvCells(i, &cells);
    for (const std::string& cell : cells) {
      // Python's repr of a finite number is a JSON number as it stands: no re-formatting.
      if (IsJsonNumber(cell)) {
        w.RawNumber(cell);
      } else {
        str(cell);
      }
    }
    w.EndArray();
    if (stream.GetSize() > (1 << 20)) NUMPROBE_RETURN_IF_ERROR(flush());
  }
  w.EndArray();
  w.Key("counts");
  w.StartObject();
  // The verdicts of the Result column, in msprobe's order, then numprobe's.
  for (const Verdict v :
       {Verdict::kPass, Verdict::kWarning, Verdict::kError, Verdict::kUnmatched}) {
    const std::string name(EnumName(v));
    w.Key(name.c_str());
    w.Int64(counts[static_cast<size_t>(v)]);
  }
  w.EndObject();
  w.EndObject();
  NUMPROBE_RETURN_IF_ERROR(flush());
  return file.Commit();
}

}  // namespace numprobe
