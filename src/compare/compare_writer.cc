#include "compare/compare_writer.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <optional>
#include <span>

#include <rapidjson/stringbuffer.h>

#include "numprobe/thread_pool.h"

#include "core/atomic_file.h"
#include "core/csv.h"
#include "core/json_writer.h"
#include "core/ordered_chunks.h"
#include "core/py_format.h"

namespace numprobe {
namespace fs = std::filesystem;

namespace {

// How many rows have each Verdict.
using VerdictCounts = std::array<int64_t, std::size(kVerdictNames)>;

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

// The JSON twin's text around its rows: the header up to "rows": [ at construction, the rows
// (assembled by AppendJsonRow, written as raw text between the writer's StartArray and EndArray:
// the compact writer writes "]" whatever it counted), then Finish() with the verdict counts.
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

  // Row `index` of the table as the JSON array of its cells, after a comma unless it is the
  // first. Assembled as text: cell by cell through the writer was the largest single cost of
  // writing a large compare. The bytes are the writer's own.
  static void AppendJsonRow(size_t index, std::span<const std::string> cells, std::string* out) {
    if (index > 0) out->push_back(',');
    out->push_back('[');
    for (size_t i = 0; i < cells.size(); ++i) {
      if (i > 0) out->push_back(',');
      // Python's repr of a finite number is a JSON number as it stands: no re-formatting.
      if (IsJsonNumber(cells[i])) {
        out->append(cells[i]);
      } else {
        AppendJsonWriterString(cells[i], out);
      }
    }
    out->push_back(']');
  }

  // Rows assembled by AppendJsonRow, in table order, and their verdicts.
  Status WriteRows(std::string_view rows, const VerdictCounts& counts) {
    for (size_t v = 0; v < counts.size(); ++v) counts_[v] += counts[v];
    if (stream_.GetSize() > 0) NUMPROBE_RETURN_IF_ERROR(FlushHeader());
    return file_.Write(rows);
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
    NUMPROBE_RETURN_IF_ERROR(FlushHeader());
    return file_.Commit();
  }

 private:
  Status FlushHeader() {
    const Status written = file_.Write(std::string_view(stream_.GetString(), stream_.GetSize()));
    stream_.Clear();
    return written;
  }

  detail::AtomicOutput file_;
  rapidjson::StringBuffer stream_;
  JsonWriter<rapidjson::StringBuffer> w_;
  VerdictCounts counts_{};
};

// The one writer of the CSV, the JSON twin or both (either path may be empty): each row's cells
// formatted once for both files, in chunks over `pool` (may be null) written in table order.
Status WriteTable(const CompareTable& table, const fs::path& csv_path, const fs::path& json_path,
                  const std::string& target_label, const std::string& golden_label,
                  ThreadPool* pool) {
  std::optional<detail::AtomicOutput> csv;
  if (!csv_path.empty()) {
    NUMPROBE_ASSIGN_OR_RETURN(csv, detail::AtomicOutput::Create(csv_path));
    std::string header;
    detail::AppendCsvLine(table.Header(), &header);
    NUMPROBE_RETURN_IF_ERROR(csv->Write(header));
  }
  std::optional<JsonTwinWriter> json;
  if (!json_path.empty()) {
    NUMPROBE_ASSIGN_OR_RETURN(detail::AtomicOutput file, detail::AtomicOutput::Create(json_path));
    json.emplace(std::move(file), table, target_label, golden_label);
  }
  // One chunk's lines of the CSV and rows of the twin, and the verdicts of its rows.
  struct ChunkText {
    std::string csv;
    std::string json;
    VerdictCounts counts{};
  };
  constexpr size_t kChunk = 1024;
  const size_t rows = table.rows.size();
  const auto chunks = static_cast<int64_t>((rows + kChunk - 1) / kChunk);
  auto format = [&](int64_t c, ChunkText* out) {
    const size_t begin = static_cast<size_t>(c) * kChunk;
    const size_t end = std::min(rows, begin + kChunk);
    std::vector<std::string> cells;
    for (size_t i = begin; i < end; ++i) {
      table.CsvCells(i, &cells);
      if (csv) detail::AppendCsvLine(cells, &out->csv);
      if (json) JsonTwinWriter::AppendJsonRow(i, cells, &out->json);
      ++out->counts[static_cast<size_t>(table.rows[i].result)];
    }
  };
  auto write = [&](const ChunkText& text) {
    if (csv) NUMPROBE_RETURN_IF_ERROR(csv->Write(text.csv));
    return json ? json->WriteRows(text.json, text.counts) : Status::Ok();
  };
  NUMPROBE_RETURN_IF_ERROR(detail::WriteChunksInOrder<ChunkText>(pool, chunks, format, write));
  if (csv) NUMPROBE_RETURN_IF_ERROR(csv->Commit());
  return json ? json->Finish() : Status::Ok();
}

}  // namespace

Status WriteCompareCsv(const CompareTable& table, const fs::path& path) {
  return WriteTable(table, path, {}, "", "", nullptr);
}

Status WriteCompareJson(const CompareTable& table, const fs::path& path,
                        const std::string& target_label, const std::string& golden_label) {
  return WriteTable(table, {}, path, target_label, golden_label, nullptr);
}

Status WriteCompareCsvAndJson(const CompareTable& table, const fs::path& csv_path,
                              const fs::path& json_path, const std::string& target_label,
                              const std::string& golden_label, ThreadPool* pool) {
  return WriteTable(table, csv_path, json_path, target_label, golden_label, pool);
}

}  // namespace numprobe
