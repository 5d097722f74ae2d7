#include "compare/compare_writer.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <rapidjson/stringbuffer.h>

#include "numprobe/thread_pool.h"

#include "compare/row_cells.h"
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

// What a cell's bytes need: CSV quoting (a comma, a quote or a line break) and JSON escaping (a
// quote, a backslash or a control byte); one table lookup per byte for both.
constexpr uint8_t kCsvQuote = 1;
constexpr uint8_t kJsonEscape = 2;
constexpr std::array<uint8_t, 256> kCellByteNeeds = [] {
  std::array<uint8_t, 256> needs{};
  for (int c = 0; c < 256; ++c) {
    if (detail::IsCsvQuoteByte(static_cast<char>(c))) needs[static_cast<size_t>(c)] |= kCsvQuote;
  }
  for (int c = 0; c < 0x20; ++c) needs[static_cast<size_t>(c)] |= kJsonEscape;
  needs['"'] |= kJsonEscape;
  needs['\\'] = kJsonEscape;
  return needs;
}();

// One output's bytes of the row being written (CSV line or JSON row), gathered in a fixed buffer
// and handed to the chunk's text in one append per row: appending cell by cell, and separators
// one push_back at a time, was a tenth of a large compare's writing. Absent when its text is null.
class RowBytes {
 public:
  explicit RowBytes(std::string* text) : text_(text) {}
  bool present() const { return text_ != nullptr; }

  void Put(char c) {
    if (used_ == buffer_.size()) Flush();
    buffer_[used_++] = c;
  }
  void Put(std::string_view bytes) {
    if (bytes.size() > buffer_.size() - used_) {
      Flush();
      if (bytes.size() > buffer_.size()) {
        text_->append(bytes);
        return;
      }
    }
    std::memcpy(buffer_.data() + used_, bytes.data(), bytes.size());
    used_ += bytes.size();
  }
  // The text itself, everything gathered so far in it, for a helper that appends to a string.
  std::string* text() {
    Flush();
    return text_;
  }
  void Flush() {
    text_->append(buffer_.data(), used_);
    used_ = 0;
  }

 private:
  std::string* text_;
  std::array<char, 4096> buffer_;  // NOLINT(cppcoreguidelines-pro-type-member-init): filled by Put
  size_t used_ = 0;
};

// One cell into the CSV line (detail::AppendCsvField's bytes) and into the JSON row (a JSON number
// as it stands, else AppendJsonWriterString's bytes), either may be absent: one pass over the cell
// finds what both need, and a plain cell is copied as it is.
void AppendCell(std::string_view cell, RowBytes& csv, RowBytes& json) {
  uint8_t needs = 0;
  for (const char c : cell) needs |= kCellByteNeeds[static_cast<uint8_t>(c)];
  if (csv.present()) {
    if ((needs & kCsvQuote) != 0) {
      detail::AppendCsvField(cell, csv.text());
    } else {
      csv.Put(cell);
    }
  }
  if (json.present()) {
    if (IsJsonNumber(cell)) {
      // Python's repr of a finite number is a JSON number as it stands: no re-formatting.
      json.Put(cell);
    } else if ((needs & kJsonEscape) != 0) {
      AppendJsonWriterString(cell, json.text());
    } else {
      json.Put('"');
      json.Put(cell);
      json.Put('"');
    }
  }
}

// ForEachCell's sink for the writer: each cell straight into the CSV line and the JSON row
// (either may be null), with no string per cell; a number is formatted once, for both, without a
// look at its bytes. Assembled as text: cell by cell through the JSON writer was the largest single
// cost of writing a large compare; the bytes are the writer's own.
class RowText {
 public:
  RowText(std::string* csv, std::string* json) : csv_(csv), json_(json) {}

  // Row `index` begins (its JSON array after a comma unless it is the first) / ends.
  void Begin(size_t index) {
    first_ = true;
    if (json_.present()) {
      if (index > 0) json_.Put(',');
      json_.Put('[');
    }
  }
  void End() {
    if (csv_.present()) {
      csv_.Put('\n');
      csv_.Flush();
    }
    if (json_.present()) {
      json_.Put(']');
      json_.Flush();
    }
  }

  void Text(std::string_view cell) {
    Separate();
    AppendCell(cell, csv_, json_);
  }
  // The dtype and shape cells repeat a few texts on every row, and a shape ("[8, 1024]") needs
  // CSV quotes; the Err_message cell repeats a few lists. Each is encoded once per chunk and
  // slot, then copied.
  void Interned(const DumpFile& file, uint32_t id) {
    // Slots by id, the two dumps' ids apart (their files are heap objects far from each other).
    const size_t slot = (id + std::hash<const DumpFile*>()(&file) / 64) % interned_.size();
    PutEncoded(&interned_[slot], &file, id, [&] { return std::string_view{file.Text(id)}; });
  }
  void Messages(MessageList list) {
    if (list.empty()) {
      Text("[]");
      return;
    }
    if (!(messages_key_ == list)) messages_.owner = nullptr;  // another list: encoded again
    messages_key_ = list;
    std::string text;
    PutEncoded(&messages_, &messages_, 0, [&] {
      text = detail::MessagesCellText(list);
      return std::string_view{text};
    });
  }
  void Float(double v) {
    Separate();
    if (std::isnan(v)) {
      AppendCell("N/A", csv_, json_);
      return;
    }
    char buffer[detail::kPyFloatReprBytes];
    const std::string_view text = detail::FormatPyFloatRepr(v, buffer);  // "inf" or "-inf" too
    if (csv_.present()) csv_.Put(text);
    if (json_.present()) {
      // Python's repr of a finite number is a JSON number as it stands.
      if (std::isfinite(v)) {
        json_.Put(text);
      } else {
        json_.Put('"');
        json_.Put(text);
        json_.Put('"');
      }
    }
  }
  template <typename Fn>
  void Write(Fn&& fn) {
    scratch_.clear();
    std::forward<Fn>(fn)(&scratch_);
    Text(scratch_);
  }

 private:
  void Separate() {
    if (!first_) {
      if (csv_.present()) csv_.Put(',');
      if (json_.present()) json_.Put(',');
    }
    first_ = false;
  }

  // A cell's CSV and JSON bytes, as AppendCell writes them, for the text `owner` and `key` name.
  struct EncodedCell {
    const void* owner = nullptr;
    uint64_t key = 0;
    std::string csv;
    std::string json;
  };
  template <typename TextFn>
  void PutEncoded(EncodedCell* cell, const void* owner, uint64_t key, TextFn&& text) {
    Separate();
    if (cell->owner != owner || cell->key != key) {
      cell->owner = owner;
      cell->key = key;
      cell->csv.clear();
      cell->json.clear();
      RowBytes csv(csv_.present() ? &cell->csv : nullptr);
      RowBytes json(json_.present() ? &cell->json : nullptr);
      AppendCell(std::forward<TextFn>(text)(), csv, json);
      if (csv.present()) csv.Flush();
      if (json.present()) json.Flush();
    }
    if (csv_.present()) csv_.Put(cell->csv);
    if (json_.present()) json_.Put(cell->json);
  }

  RowBytes csv_;
  RowBytes json_;
  std::string scratch_;
  bool first_ = true;
  std::array<EncodedCell, 64> interned_;
  EncodedCell messages_;
  MessageList messages_key_;
};

// The JSON twin's text around its rows: the header up to "rows": [ at construction, the rows
// (assembled as text by AppendRow, written as raw text between the writer's StartArray and
// EndArray: the compact writer writes "]" whatever it counted), then Finish() with the counts.
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

  // Rows assembled by AppendRow, in table order, and their verdicts.
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
    Status written = file_.Write(std::string_view(stream_.GetString(), stream_.GetSize()));
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
    void clear() {  // for reuse: the strings keep their memory
      csv.clear();
      json.clear();
      counts = {};
    }
  };
  constexpr size_t kChunk = 1024;
  const size_t rows = table.rows.size();
  const auto chunks = static_cast<int64_t>((rows + kChunk - 1) / kChunk);
  auto format = [&](int64_t c, ChunkText* out) {
    const size_t begin = static_cast<size_t>(c) * kChunk;
    const size_t end = std::min(rows, begin + kChunk);
    RowText row(csv ? &out->csv : nullptr, json ? &out->json : nullptr);
    for (size_t i = begin; i < end; ++i) {
      row.Begin(i);
      detail::ForEachCell(table, i, row);
      row.End();
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
