#include "compare/compare_writer.h"

#include <cmath>
#include <cstdio>
#include <functional>
#include <span>

#include <fmt/format.h>
#include <rapidjson/stringbuffer.h>

#include "numprobe/thread_pool.h"

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

// The JSON twin, row by row: the header up to "rows" at construction, then Row() per table row,
// then Finish() with the counts. Flushed in 1 MiB pieces like the CSV.
class JsonTwinWriter {
 public:
  JsonTwinWriter(detail::AtomicOutput file, const CompareTable& table,
                 const std::string& target_label, const std::string& golden_label)
      : file_(std::move(file)), w_(stream_, JsonFileKind::kResult) {
    w_.StartObject();
    w_.Key("numprobe_compare");
    w_.Int(1);
    w_.Key("mode");
    w_.String(std::string(EnumName(table.mode)));
    w_.Key("target");
    w_.String(target_label);
    w_.Key("golden");
    w_.String(golden_label);
    w_.Key("columns");
    w_.StartArray();
    for (const std::string& h : table.Header()) w_.String(h);
    w_.EndArray();
    w_.Key("rows");
    w_.StartArray();
  }

  Status Row(const CompareRow& row, std::span<const std::string> cells) {
    ++counts_[static_cast<size_t>(row.result)];
    // The row's array is assembled here and written raw: cell by cell through the writer was the
    // largest single cost of writing a large compare. The bytes are the writer's own.
    row_.assign(1, '[');
    for (size_t i = 0; i < cells.size(); ++i) {
      if (i > 0) row_.push_back(',');
      // Python's repr of a finite number is a JSON number as it stands: no re-formatting.
      if (IsJsonNumber(cells[i])) {
        row_.append(cells[i]);
      } else {
        AppendJsonWriterString(cells[i], &row_);
      }
    }
    row_.push_back(']');
    w_.RawArray(row_);
    return stream_.GetSize() > (1 << 20) ? Flush() : Status::Ok();
  }

  Status Finish() {
    w_.EndArray();
    w_.Key("counts");
    w_.StartObject();
    // The verdicts of the Result column, in msprobe's order, then numprobe's.
    for (const Verdict v :
         {Verdict::kPass, Verdict::kWarning, Verdict::kError, Verdict::kUnmatched}) {
      const std::string name(EnumName(v));
      w_.Key(name.c_str());
      w_.Int64(counts_[static_cast<size_t>(v)]);
    }
    w_.EndObject();
    w_.EndObject();
    NUMPROBE_RETURN_IF_ERROR(Flush());
    return file_.Commit();
  }

 private:
  Status Flush() {
    const Status written = file_.Write(std::string_view(stream_.GetString(), stream_.GetSize()));
    stream_.Clear();
    return written;
  }

  detail::AtomicOutput file_;
  rapidjson::StringBuffer stream_;
  JsonWriter<rapidjson::StringBuffer> w_;
  std::array<int64_t, std::size(kVerdictNames)> counts_{};  // by Verdict
  std::string row_;                                         // the row being assembled
};

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
  JsonTwinWriter json(std::move(file), table, target_label, golden_label);
  std::vector<std::string> cells;
  for (size_t i = 0; i < table.rows.size(); ++i) {
    table.CsvCells(i, &cells);
    NUMPROBE_RETURN_IF_ERROR(json.Row(table.rows[i], cells));
  }
  return json.Finish();
}

Status WriteCompareCsvAndJson(const CompareTable& table, const fs::path& csv_path,
                              const fs::path& json_path, const std::string& target_label,
                              const std::string& golden_label, ThreadPool* pool) {
  NUMPROBE_ASSIGN_OR_RETURN(detail::CsvFileWriter csv, detail::CsvFileWriter::Create(csv_path));
  NUMPROBE_ASSIGN_OR_RETURN(detail::AtomicOutput json_file,
                            detail::AtomicOutput::Create(json_path));
  JsonTwinWriter json(std::move(json_file), table, target_label, golden_label);
  NUMPROBE_RETURN_IF_ERROR(csv.Line(table.Header()));
  auto spread = [pool](int64_t count, const std::function<void(int64_t)>& fn) {
    if (pool != nullptr) {
      pool->ParallelFor(count, fn);
    } else {
      for (int64_t i = 0; i < count; ++i) fn(i);
    }
  };
  // A block of rows is formatted (in chunks over the pool), then its cells go to both files side
  // by side: each float is formatted once, and a block's cells stay a few MB whatever the table.
  constexpr size_t kBlock = 4096;
  constexpr size_t kChunk = 256;
  std::vector<std::vector<std::string>> cells(std::min(kBlock, table.rows.size()));
  for (size_t begin = 0; begin < table.rows.size(); begin += kBlock) {
    const size_t length = std::min(kBlock, table.rows.size() - begin);
    spread(static_cast<int64_t>((length + kChunk - 1) / kChunk), [&](int64_t c) {
      const size_t first = static_cast<size_t>(c) * kChunk;
      for (size_t k = first; k < std::min(length, first + kChunk); ++k) {
        table.CsvCells(begin + k, &cells[k]);
      }
    });
    std::array<Status, 2> written;
    spread(2, [&](int64_t which) {
      for (size_t k = 0; k < length && written[which].ok(); ++k) {
        written[which] =
            which == 0 ? csv.Line(cells[k]) : json.Row(table.rows[begin + k], cells[k]);
      }
    });
    NUMPROBE_RETURN_IF_ERROR(written[0]);
    NUMPROBE_RETURN_IF_ERROR(written[1]);
  }
  NUMPROBE_RETURN_IF_ERROR(csv.Commit());
  return json.Finish();
}

}  // namespace numprobe
