// msprobe's merge_result (core/compare/merge_result): per-rank compare results gathered into one
// workbook, one sheet per compare index and one column per rank (see merge.h).
#include "numprobe/app/merge.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>
#include <regex>
#include <unordered_set>

#include <fmt/format.h>

#include "numprobe/json_value.h"

#include "compare/compare_internal.h"
#include "core/csv_read.h"
#include "core/json.h"
#include "core/py_format.h"
#include "core/text_file.h"
#include "core/xlsx_workbook.h"
#include "merge/xlsx_reader.h"

#ifdef NUMPROBE_WITH_YAML
#include <yaml-cpp/yaml.h>
#endif
#ifdef NUMPROBE_WITH_XLSX
#include <xlsxwriter.h>
#endif

namespace numprobe {
namespace {

namespace fs = std::filesystem;
using Kind = MergeCell::Kind;

constexpr uintmax_t kMaxTextTable = uintmax_t{4} << 30;  // a CSV / JSON result read into memory

// msprobe's CompareConst indexes of each mode (ALL_COMPARE_INDEX / SUMMARY_COMPARE_INDEX), plus
// the requires_grad column it merges too.
const std::vector<std::string> kTensorIndexes = {"Cosine",
                                                 "EucDist",
                                                 "MaxAbsErr",
                                                 "MaxRelativeErr",
                                                 "One Thousandth Err Ratio",
                                                 "Five Thousandths Err Ratio",
                                                 "Requires_grad Consistent"};
const std::vector<std::string> kStatsIndexes = {
    "Max diff",        "Min diff",        "Mean diff",
    "L2norm diff",     "MaxRelativeErr",  "MinRelativeErr",
    "MeanRelativeErr", "NormRelativeErr", "Requires_grad Consistent"};

struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<MergeCell>> rows;
};

MergeCell FromText(std::string text) {
  MergeCell c;
  if (text.empty()) return c;
  double v = 0;
  if (text == "True" || text == "False") {
    c.kind = Kind::kBool;
    c.number = text == "True" ? 1 : 0;
  } else if (detail::ParsePyNumber(text, &v) && std::isfinite(v)) {
    c.kind = Kind::kNumber;
    c.number = v;
  } else {
    c.kind = Kind::kText;
  }
  c.text = std::move(text);
  return c;
}

Result<Table> ReadCsvTable(const fs::path& path) {
  NUMPROBE_ASSIGN_OR_RETURN(std::string text, detail::ReadTextFile(path, kMaxTextTable));
  auto parsed = detail::ParseCsv(text);
  if (!parsed) return parsed.error().WithContext(path.string());
  std::vector<std::vector<std::string>>& records = *parsed;
  if (records.empty()) return Status::Corrupt(path.string() + ": empty");
  Table t;
  t.header = std::move(records[0]);
  for (size_t r = 1; r < records.size(); ++r) {
    if (records[r].size() != t.header.size()) {
      return Status::Corrupt(fmt::format("{}: line {} has {} fields, the header {}", path.string(),
                                         r + 1, records[r].size(), t.header.size()));
    }
    std::vector<MergeCell> row;
    for (std::string& f : records[r]) row.push_back(FromText(std::move(f)));
    t.rows.push_back(std::move(row));
  }
  return t;
}

// numprobe's JSON twin: {"columns": [...], "rows": [[cell, ...], ...]}.
Result<Table> ReadJsonTable(const fs::path& path) {
  NUMPROBE_ASSIGN_OR_RETURN(std::string text, detail::ReadTextFile(path, kMaxTextTable));
  auto doc = ParseJson(text, kPythonJson);
  if (!doc) return doc.error().WithContext(path.string());
  const JsonValue* columns = doc->Find("columns");
  const JsonValue* rows = doc->Find("rows");
  if (columns == nullptr || !columns->is_array() || rows == nullptr || !rows->is_array()) {
    return Status::Corrupt(path.string() + ": not a numprobe compare result (columns, rows)");
  }
  Table t;
  for (const JsonValue& c : columns->array()) {
    if (c.kind() != JsonValue::Kind::kString) {
      return Status::Corrupt(path.string() + ": a column name is not a string");
    }
    t.header.push_back(c.string_value());
  }
  for (const JsonValue& r : rows->array()) {
    if (!r.is_array() || r.array().size() != t.header.size()) {
      return Status::Corrupt(path.string() + ": a row does not match the columns");
    }
    std::vector<MergeCell> row;
    for (const JsonValue& v : r.array()) {
      switch (v.kind()) {
        case JsonValue::Kind::kString:
          row.push_back(FromText(v.string_value()));
          break;
        case JsonValue::Kind::kInt:
          row.push_back(
              {Kind::kNumber, static_cast<double>(v.int_value()), std::to_string(v.int_value())});
          break;
        case JsonValue::Kind::kDouble:
          row.push_back({Kind::kNumber, v.double_value(), detail::PyFloatRepr(v.double_value())});
          break;
        case JsonValue::Kind::kBigInt:  // an integer beyond 64 bits, read as a float
          row.push_back({Kind::kNumber, v.number_value(), detail::PyFloatRepr(v.number_value())});
          break;
        case JsonValue::Kind::kBool:
          row.push_back(
              {Kind::kBool, v.bool_value() ? 1.0 : 0.0, v.bool_value() ? "True" : "False"});
          break;
        default:
          row.emplace_back();
      }
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

Result<Table> ReadXlsxTable(const fs::path& path) {
#ifdef NUMPROBE_WITH_EXPAT
  NUMPROBE_ASSIGN_OR_RETURN(merge_detail::XlsxGrid grid, merge_detail::ReadXlsxFirstSheet(path));
  if (grid.empty()) return Status::Corrupt(path.string() + ": the sheet is empty");
  Table t;
  for (const auto& c : grid[0]) t.header.push_back(c.text);
  for (size_t r = 1; r < grid.size(); ++r) {
    std::vector<MergeCell> row;
    for (auto& c : grid[r]) {
      MergeCell m;
      m.number = c.number;
      m.text = c.text;
      switch (c.kind) {
        case merge_detail::XlsxCell::Kind::kNumber:
          m.kind = Kind::kNumber;
          break;
        case merge_detail::XlsxCell::Kind::kBool:
          m.kind = Kind::kBool;
          break;
        case merge_detail::XlsxCell::Kind::kText:
          m.kind = Kind::kText;  // a text cell stays text, as pandas reads it
          break;
        default:
          break;
      }
      row.push_back(std::move(m));
    }
    t.rows.push_back(std::move(row));
  }
  return t;
#else
  return Status::Unsupported(path.string() + ": reading .xlsx needs Expat (NUMPROBE_WITH_EXPAT)");
#endif
}

// A CSV or JSON table typed as pandas types the columns of the DataFrame msprobe writes to xlsx:
// a column whose cells are all numbers (or all booleans) keeps them; in any other column every
// cell is text ("0" beside "12.5%" stays "0").
void TypeColumns(Table* t) {
  for (size_t c = 0; c < t->header.size(); ++c) {
    bool numbers = true;
    bool bools = true;
    for (const auto& row : t->rows) {
      const Kind k = row[c].kind;
      numbers = numbers && (k == Kind::kNumber || k == Kind::kEmpty);
      bools = bools && (k == Kind::kBool || k == Kind::kEmpty);
    }
    if (numbers || bools) continue;
    for (auto& row : t->rows) {
      if (row[c].kind != Kind::kEmpty) row[c].kind = Kind::kText;
    }
  }
}

// str() of a cell as Python prints the value pandas read.
std::string PyStr(const MergeCell& c) {
  switch (c.kind) {
    case Kind::kNumber:
      return detail::PyFloatRepr(c.number);
    case Kind::kBool:
      return c.number != 0 ? "True" : "False";
    case Kind::kText:
      return c.text;
    default:
      return "";
  }
}

struct RankFile {
  int rank = 0;
  std::string ts;
  fs::path path;
  int preference = 0;  // xlsx 0, csv 1, json 2
};

}  // namespace

Result<MergeConfig> LoadMergeConfig(const fs::path& path) {
#ifdef NUMPROBE_WITH_YAML
  YAML::Node root;
  try {  // yaml-cpp reports errors by exception; nothing escapes this function
    root = YAML::LoadFile(path.string());
  } catch (const YAML::BadFile&) {
    return Status::NotFound(path.string() + ": cannot be read");
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(
        fmt::format("{}: line {}: {}", path.string(), e.mark.line + 1, e.msg));
  }
  if (!root.IsMap()) return Status::InvalidArgument(path.string() + ": config.yaml is empty");
  MergeConfig config;
  const YAML::Node api = root["api"];
  if (!api || api.IsNull() || (api.IsSequence() && api.size() == 0)) {
    return Status::InvalidArgument(path.string() +
                                   ": the APIs required to merge data were not found (api)");
  }
  if (!api.IsSequence()) {
    return Status::InvalidArgument(path.string() + ": the config format of 'api' is incorrect");
  }
  for (const auto& a : api) {
    if (!a.IsScalar()) {
      return Status::InvalidArgument(path.string() + ": the config format of 'api' is incorrect");
    }
    config.apis.push_back(a.as<std::string>());
  }
  const YAML::Node index = root["compare_index"];
  if (index && !index.IsNull()) {
    if (!index.IsSequence()) {
      return Status::InvalidArgument(path.string() +
                                     ": the config format of 'compare_index' is incorrect");
    }
    for (const auto& c : index) {
      if (!c.IsScalar()) {
        return Status::InvalidArgument(path.string() +
                                       ": the config format of 'compare_index' is incorrect");
      }
      config.compare_index.push_back(c.as<std::string>());
    }
  }
  return config;
#else
  return Status::Unsupported(path.string() + ": reading YAML needs yaml-cpp (NUMPROBE_WITH_YAML)");
#endif
}

Result<MergedResults> MergeCompareResults(const fs::path& input_dir, const MergeConfig& config) {
  MergedResults out;
  std::error_code ec;
  if (!fs::is_directory(input_dir, ec)) {
    return Status::NotFound(input_dir.string() + ": not a folder");
  }
  static const std::regex kMulti(
      R"(^compare_result_rank(\d+)(?:-rank\1)?_(\d{14})\.(xlsx|csv|json)$)");
  static const std::regex kSingle(R"(^compare_result_(rank|rank-rank)_\d{14}\.(xlsx|csv|json)$)");
  std::map<int, RankFile> by_rank;
  for (auto it = fs::directory_iterator(input_dir, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    if (!it->is_regular_file()) continue;
    const std::string name = it->path().filename().string();
    std::smatch m;
    if (std::regex_match(name, m, kMulti)) {
      int rank = 0;
      const std::string digits = m[1].str();
      if (std::from_chars(digits.data(), digits.data() + digits.size(), rank).ec != std::errc()) {
        continue;
      }
      const std::string ext = m[3].str();
      RankFile f{rank, m[2].str(), it->path(), ext == "xlsx" ? 0 : ext == "csv" ? 1 : 2};
      auto [slot, inserted] = by_rank.try_emplace(rank, f);
      if (!inserted) {
        RankFile& old = slot->second;
        if (f.ts > old.ts || (f.ts == old.ts && f.preference < old.preference)) {
          if (f.ts != old.ts) {
            out.warnings.push_back(fmt::format("rank{}: {} is newer than {}; merged the newer",
                                               rank, name, old.path.filename().string()));
          }
          old = f;
        }
      }
    } else if (std::regex_match(name, kSingle)) {
      out.warnings.push_back(name + ": a single-rank compare result does not need to be merged");
    }
  }
  if (ec) return Status::IoError(input_dir.string() + ": " + ec.message());
  if (by_rank.size() < 2) {
    return Status::NotFound(input_dir.string() +
                            ": fewer than two compare_result_rank{N}_{timestamp} files; nothing "
                            "to merge");
  }

  // compare index -> NPU Name -> rank -> cell, plus each rank's name order.
  std::vector<std::string> indexes = config.compare_index;
  std::map<std::string, std::map<std::string, std::map<int, MergeCell>>> values;
  std::map<int, std::vector<std::string>> names_of_rank;
  for (const auto& [rank, file] : by_rank) {
    const std::string ext = file.path.extension().string();
    Result<Table> table = ext == ".xlsx"  ? ReadXlsxTable(file.path)
                          : ext == ".csv" ? ReadCsvTable(file.path)
                                          : ReadJsonTable(file.path);
    if (!table) return table.error();
    if (ext != ".xlsx") TypeColumns(&*table);
    if (table->rows.empty()) {
      out.warnings.push_back(fmt::format("rank{}: the compare result is empty; not merged", rank));
      continue;
    }
    auto column = [&](std::string_view name) -> std::optional<size_t> {
      const auto it = std::find(table->header.begin(), table->header.end(), name);
      if (it == table->header.end()) return std::nullopt;
      return static_cast<size_t>(it - table->header.begin());
    };
    const std::vector<std::string>* valid = nullptr;
    if (column("Cosine")) {
      valid = &kTensorIndexes;
    } else if (column("Max diff")) {
      valid = &kStatsIndexes;
    } else if (column("NPU MD5")) {
      out.warnings.push_back(fmt::format(
          "rank{}: an md5 compare result cannot be merged; not shown in the merged result", rank));
      continue;
    } else {
      out.warnings.push_back(
          fmt::format("rank{}: not a compare result numprobe or msprobe writes; not merged", rank));
      continue;
    }
    if (indexes.empty()) indexes = *valid;
    const bool consistent = std::all_of(indexes.begin(), indexes.end(), [&](const std::string& i) {
      return std::find(valid->begin(), valid->end(), i) != valid->end();
    });
    const auto name_col = column("NPU Name");
    const auto npu_max = column("NPU max");
    const auto bench_max = column("Bench max");
    if (!consistent || !name_col || !npu_max || !bench_max) {
      out.warnings.push_back(fmt::format(
          "rank{}: its compare indexes differ from the others' (or the configured ones); not "
          "merged",
          rank));
      continue;
    }
    std::vector<size_t> index_cols;
    for (const std::string& i : indexes) index_cols.push_back(*column(i));
    std::vector<std::string>& order = names_of_rank[rank];
    std::unordered_set<std::string> in_order;
    for (const std::string& api : config.apis) {
      const std::string pattern = api + ".";
      size_t found = 0;
      for (const auto& row : table->rows) {
        const std::string& name = row[*name_col].text;
        if (name.find(pattern) == std::string::npos) continue;
        ++found;
        if (!in_order.insert(name).second) continue;
        order.push_back(name);
        for (size_t k = 0; k < indexes.size(); ++k) {
          MergeCell cell = row[index_cols[k]];
          if (cell.kind == Kind::kText &&
              (cell.text == "N/A" || cell.text == "unsupported" || cell.text == "Nan")) {
            cell.text = "NPU:" + PyStr(row[*npu_max]) + "  Bench:" + PyStr(row[*bench_max]);
          }
          values[indexes[k]][name][rank] = std::move(cell);
        }
      }
      if (found == 0) {
        out.warnings.push_back(
            fmt::format("rank{}: {} not found in the compare result", rank, api));
      }
    }
    out.ranks.push_back(rank);
  }
  if (out.ranks.empty()) {
    return Status::InvalidArgument(input_dir.string() + ": no compare index recognised");
  }
  // Row order: the first rank's, then names only later ranks have, as pandas' outer merge on
  // the name leaves them.
  std::vector<std::string> names;
  std::unordered_set<std::string> seen;
  for (int r : out.ranks) {
    for (const std::string& n : names_of_rank[r]) {
      if (seen.insert(n).second) names.push_back(n);
    }
  }
  for (const std::string& index : indexes) {
    MergeSheet sheet;
    sheet.index = index;
    sheet.columns.push_back("NPU Name");
    for (int r : out.ranks) sheet.columns.push_back("rank" + std::to_string(r));
    for (const std::string& name : names) {
      std::vector<MergeCell> row;
      row.push_back({Kind::kText, 0, name});
      const auto& per_rank = values[index][name];
      for (int r : out.ranks) {
        const auto it = per_rank.find(r);
        row.push_back(it == per_rank.end() ? MergeCell{} : it->second);
      }
      sheet.rows.push_back(std::move(row));
    }
    out.sheets.push_back(std::move(sheet));
  }
  return out;
}

Status WriteMergedXlsx(const MergedResults& merged, const fs::path& path) {
  for (const MergeSheet& s : merged.sheets) {
    for (const auto& row : s.rows) {
      for (const MergeCell& c : row) {
        if (c.kind == Kind::kText && detail::LooksLikeFormula(c.text)) {
          return Status::Rejected(
              fmt::format("{}: the value '{}' would act as a spreadsheet formula; not written",
                          path.string(), c.text));
        }
      }
    }
  }
#ifdef NUMPROBE_WITH_XLSX
  NUMPROBE_ASSIGN_OR_RETURN(detail::XlsxWorkbook workbook,
                            detail::XlsxWorkbook::Create(path, /*constant_memory=*/false));
  lxw_workbook* wb = workbook.get();
  lxw_format* bold = workbook_add_format(wb);  // pandas' header style
  format_set_bold(bold);
  format_set_border(bold, LXW_BORDER_THIN);
  format_set_align(bold, LXW_ALIGN_CENTER);
  bool ok = true;
  for (const MergeSheet& s : merged.sheets) {
    lxw_worksheet* ws = workbook_add_worksheet(wb, s.index.c_str());
    if (ws == nullptr) {
      ok = false;
      break;
    }
    for (size_t c = 0; c < s.columns.size(); ++c) {
      ok &= worksheet_write_string(ws, 0, static_cast<lxw_col_t>(c), s.columns[c].c_str(), bold) ==
            LXW_NO_ERROR;
    }
    for (size_t r = 0; r < s.rows.size(); ++r) {
      const auto row = static_cast<lxw_row_t>(r + 1);
      for (size_t c = 0; c < s.rows[r].size(); ++c) {
        const MergeCell& cell = s.rows[r][c];
        const auto col = static_cast<lxw_col_t>(c);
        switch (cell.kind) {
          case Kind::kNumber:
            ok &= worksheet_write_number(ws, row, col, cell.number, nullptr) == LXW_NO_ERROR;
            break;
          case Kind::kBool:
            ok &= worksheet_write_boolean(ws, row, col, cell.number != 0 ? 1 : 0, nullptr) ==
                  LXW_NO_ERROR;
            break;
          case Kind::kText:
            ok &= worksheet_write_string(ws, row, col, cell.text.c_str(), nullptr) == LXW_NO_ERROR;
            break;
          default:
            break;
        }
      }
    }
  }
  return workbook.Close(ok);
#else
  return Status::Unsupported(path.string() + ": xlsx output needs libxlsxwriter");
#endif
}

}  // namespace numprobe
