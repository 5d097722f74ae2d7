// The compare JSON twin read back (compare_json.h), as SAX events from core/json.h.
#include <cmath>
#include <memory>

#include <fmt/format.h>

#include "compare/compare_json.h"
#include "core/json.h"

namespace numprobe {
namespace {

constexpr size_t kMaxColumns = 1024;
constexpr size_t kMaxCellBytes = size_t{16} << 20;

class TwinHandler final : public JsonEvents {
 public:
  explicit TwinHandler(CompareJsonTable& table) : table_(table) {}

  bool StartObject() override { return Open(false); }
  bool EndObject() override { return Close(); }
  bool StartArray() override {
    // A second "columns" (or "rows") is refused, not merged: the table's columns are handed over
    // once, and rows read under one set of columns must not be read under another.
    if (depth_ == 1 && key_ == "columns") {
      if (seen_columns_) return Fail(Status::Corrupt(R"("columns" appears twice)"));
      seen_columns_ = true;
      in_columns_ = true;
    } else if (depth_ == 1 && key_ == "rows") {
      if (!have_columns_) return Fail(Status::Corrupt(R"("rows" comes before "columns")"));
      if (seen_rows_) return Fail(Status::Corrupt(R"("rows" appears twice)"));
      seen_rows_ = true;
      in_rows_ = true;
    } else if (in_rows_ && depth_ == 2) {
      in_row_ = true;
      cells_.clear();
      ++row_number_;
    }
    return Open(true);
  }
  bool EndArray() override {
    if (in_row_ && depth_ == 3) {
      in_row_ = false;
      if (!FinishRow()) return false;
    } else if (in_columns_ && depth_ == 2) {
      in_columns_ = false;
      if (columns_.empty()) return Fail(Status::Corrupt("\"columns\" is empty"));
      have_columns_ = true;
      if (Status s = table_.Columns(columns_); !s.ok()) return Fail(std::move(s));
    } else if (in_rows_ && depth_ == 2) {
      in_rows_ = false;
    }
    return Close();
  }
  bool Key(std::string_view key) override {
    if (depth_ == 1) {
      key_.assign(key);
      if (key_ == "numprobe_compare") seen_marker_ = true;
    }
    return true;
  }
  bool String(std::string_view text) override {
    if (in_row_ && depth_ == 3) return AddCell(false, 0, text);
    if (in_columns_ && depth_ == 2) {
      if (columns_.size() >= kMaxColumns) return Fail(Status::Corrupt("more than 1024 columns"));
      columns_.emplace_back(text);
      return true;
    }
    if (depth_ == 1) {
      if (key_ == "mode") info_.mode = std::string(text);
      if (key_ == "target") info_.target = std::string(text);
      if (key_ == "golden") info_.golden = std::string(text);
    }
    return Scalar();
  }
  bool Number(std::string_view literal) override {
    if (in_row_ && depth_ == 3) {
      const double v = ReadJsonNumber(literal).number;
      return std::isfinite(v) ? AddCell(true, v, {})
                              : AddCell(false, 0, std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf"));
    }
    return Scalar();
  }
  bool Bool(bool b) override {
    if (in_row_ && depth_ == 3) return AddCell(false, 0, b ? "True" : "False");
    return Scalar();
  }
  bool Null() override {
    if (in_row_ && depth_ == 3) return AddCell(false, 0, "");
    return Scalar();
  }

  bool seen_marker() const { return seen_marker_; }
  bool have_columns() const { return have_columns_; }
  CompareJsonInfo Take() { return std::move(info_); }

 private:
  bool Open(bool array) {
    if (in_row_ && depth_ >= 3) {
      return Fail(Status::Corrupt(fmt::format("row {} holds a nested value", row_number_)));
    }
    if (in_rows_ && depth_ == 2 && !array) return Fail(Status::Corrupt("a row is not an array"));
    if (depth_ == 0 && array) return Fail(Status::Corrupt("the root is not an object"));
    ++depth_;
    return true;
  }
  bool Close() {
    --depth_;
    return true;
  }
  bool Scalar() {
    if (depth_ == 0) return Fail(Status::Corrupt("the root is not an object"));
    if (in_rows_ && depth_ == 2) return Fail(Status::Corrupt("a row is not an array"));
    return true;
  }
  bool AddCell(bool number, double v, std::string_view text) {
    if (cells_.size() >= columns_.size()) {
      return Fail(Status::Corrupt(
          fmt::format("row {} has more cells than the {} columns", row_number_, columns_.size())));
    }
    if (text.size() > kMaxCellBytes) {
      return Fail(
          Status::Corrupt(fmt::format("row {} has a cell of {} bytes", row_number_, text.size())));
    }
    if (texts_.size() <= cells_.size()) texts_.resize(cells_.size() + 1);
    CompareJsonCell cell;
    cell.is_number = number;
    cell.number = v;
    if (!number) texts_[cells_.size()].assign(text);
    cells_.push_back(cell);
    return true;
  }
  bool FinishRow() {
    if (cells_.size() != columns_.size()) {
      return Fail(Status::Corrupt(fmt::format("row {} has {} cells, expected {}", row_number_,
                                              cells_.size(), columns_.size())));
    }
    // The texts are stable now that the row is complete.
    for (size_t i = 0; i < cells_.size(); ++i) {
      if (!cells_[i].is_number) cells_[i].text = texts_[i];
    }
    if (Status s = table_.Row(cells_); !s.ok()) return Fail(std::move(s));
    return true;
  }

  CompareJsonTable& table_;
  int depth_ = 0;
  std::string key_;
  bool seen_marker_ = false;
  bool seen_columns_ = false;
  bool in_columns_ = false;
  bool have_columns_ = false;
  bool seen_rows_ = false;
  bool in_rows_ = false;
  bool in_row_ = false;
  uint64_t row_number_ = 0;
  std::vector<std::string> columns_;
  std::vector<CompareJsonCell> cells_;
  std::vector<std::string> texts_;
  CompareJsonInfo info_;
};

}  // namespace

Result<CompareJsonInfo> ReadCompareJson(const std::filesystem::path& path,
                                        CompareJsonTable& table) {
  TwinHandler handler(table);
  // numprobe writes standard JSON; bare NaN/Infinity are read as the texts of those cells.
  const Status s = ParseJsonFileEvents(
      path, handler, kPythonJson);
  if (!s.ok()) return s.code() == ErrorCode::kIoError ? s : s.WithContext(path.string());
  if (!handler.seen_marker()) {
    return Status::Corrupt(
        fmt::format("{}: not a numprobe compare result (no \"numprobe_compare\")", path.string()));
  }
  if (!handler.have_columns()) {
    return Status::Corrupt(fmt::format(R"({}: no "columns" and "rows")", path.string()));
  }
  return handler.Take();
}

}  // namespace numprobe
