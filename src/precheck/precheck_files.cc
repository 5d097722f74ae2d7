// The pre-check result files. The two CSVs are msprobe's, as its Python csv.writer writes them
// (UTF-8 with a byte-order mark, CRLF line ends, minimal quoting, floats as "{:.14f}", " " for an
// empty cell), with numprobe's columns after msprobe's; they are appended API by API and flushed,
// so that an interrupted run leaves whole lines to resume from. They are read back with
// core/csv_read (quoted fields hold newlines: msprobe's messages end in "\n"). The JSON twin
// precheck_{ts}.json is written atomically at the end, with every API and numprobe's verdicts.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <rapidjson/stringbuffer.h>

#include "numprobe/app/precheck.h"

#include "core/atomic_file.h"
#include "core/checked.h"
#include "core/csv_read.h"
#include "core/json_writer.h"
#include "core/py_format.h"
#include "core/regular_file.h"
#include "core/text_file.h"
#include "msprobe/entry_name.h"
#include "precheck/precheck_text.h"

namespace numprobe {
namespace fs = std::filesystem;
namespace {

using detail::CsvWriterLine;
using detail::Fixed14;
constexpr std::string_view kBom = detail::kUtf8Bom;

struct ColumnNames {
  std::string_view header;  // msprobe's
  std::string_view key;     // numprobe's JSON key
};
constexpr std::array<ColumnNames, kPcColumnCount> kColumns = {{
    {"余弦相似度", "cosine"},
    {"最大绝对误差", "max_abs_err"},
    {"双百指标", "dual_100"},
    {"双千指标", "dual_1000"},
    {"双万指标", "dual_10000"},
    {"二进制一致错误率", "error_rate"},
    {"误差均衡性", "error_balance"},
    {"均方根误差", "rmse"},
    {"小值域错误占比", "small_value_err_ratio"},
    {"相对误差最大值", "max_rel_err"},
    {"相对误差平均值", "mean_rel_err"},
    {"inf/nan错误率", "inf_nan_err_ratio"},
    {"相对误差错误率", "rel_err_ratio"},
    {"绝对误差错误率", "abs_err_ratio"},
    {"ULP误差最大值", "max_ulp_err"},
    {"ULP误差平均值", "mean_ulp_err"},
    {"ULP误差大于阈值占比", "ulp_err_proportion"},
}};

// numprobe's columns after msprobe's Status and Message.
constexpr std::array<std::string_view, 7> kDetailExtras = {
    "Standard",           "Standard Result",   "Reason", "Worst Index",
    "Worst Device Value", "Worst Bench Value", "Device"};
constexpr std::string_view kVerdictColumn = "numprobe Result";

std::string Cell(const std::optional<double>& v) { return v ? Fixed14(*v) : " "; }

std::vector<std::string> DetailHeader() {
  std::vector<std::string> h = {"API Name", "Bench Dtype", "DEVICE Dtype", "Shape"};
  for (const ColumnNames& c : kColumns) h.emplace_back(c.header);
  h.emplace_back("Status");
  h.emplace_back("Message");
  for (std::string_view e : kDetailExtras) h.emplace_back(e);
  return h;
}

std::vector<std::string> ResultHeader() {
  return {"API name", "Forward Test Success", "Backward Test Success", "Message",
          std::string(kVerdictColumn)};
}

std::vector<std::string> DetailCells(const PrecheckRow& r) {
  std::vector<std::string> cells = {r.name, r.bench_dtype, r.device_dtype, r.shape};
  for (const auto& v : r.columns) cells.push_back(Cell(v));
  cells.emplace_back(EnumName(r.status));
  cells.push_back(r.message);
  cells.push_back(r.standard);
  cells.emplace_back(r.standard.empty() ? "" : EnumName(r.standard_result));
  cells.push_back(r.reason);
  cells.push_back(r.worst_index >= 0 ? std::to_string(r.worst_index) : "");
  cells.push_back(r.worst_device ? detail::PyFloatRepr(*r.worst_device) : "");
  cells.push_back(r.worst_bench ? detail::PyFloatRepr(*r.worst_bench) : "");
  cells.push_back(r.device);
  return cells;
}

std::vector<std::string> ResultCells(const PrecheckApiResult& a) {
  return {a.api, std::string(EnumName(a.forward)), std::string(EnumName(a.backward)), a.message,
          std::string(EnumName(a.verdict))};
}

// ---- reading ----

using CsvRecords = std::vector<std::vector<std::string>>;
constexpr uintmax_t kMaxCsvBytes = uintmax_t{4} << 30;  // a result CSV read into memory

// The records of CSV text as msprobe writes it (a leading byte-order mark skipped); kCorrupt
// when malformed or empty. Messages start with `label`.
Result<CsvRecords> ParseCsvText(std::string_view text, std::string_view label) {
  if (text.starts_with(kBom)) text.remove_prefix(kBom.size());
  auto records = detail::ParseCsv(text);
  if (!records.ok()) return records.error().WithContext(label);
  if (records->empty()) return Status::Corrupt(fmt::format("{}: empty CSV", label));
  return records;
}

Result<CsvRecords> ReadCsv(const fs::path& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return Status::NotFound(fmt::format("{}: cannot open", path.string()));
  NUMPROBE_ASSIGN_OR_RETURN(std::string text, detail::ReadTextFile(path, kMaxCsvBytes));
  return ParseCsvText(text, path.string());
}

std::map<std::string, size_t> HeaderIndex(const std::vector<std::string>& header) {
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < header.size(); ++i) index.emplace(header[i], i);
  return index;
}

std::optional<double> ParseCell(std::string_view text) {
  if (text.empty() || text == " ") return std::nullopt;
  double v = 0;
  if (detail::ParsePyNumber(text, &v)) return v;
  return std::nullopt;
}

// The API of a detail row name: "Functional.relu.0" of "Functional.relu.0.forward.output.1".
std::string ApiOfRow(const std::string& name, bool* backward) {
  const std::string_view entry = detail::EntryOfRow(name);
  const detail::EntryNameParts parts = detail::ParseEntryName(entry);
  *backward = parts.backward();
  if (entry.size() == name.size() || parts.api.empty()) {
    *backward = false;
    return name;
  }
  return std::string(entry.substr(0, parts.op.size() + 1 + parts.call.size()));
}

Status WriteTwin(const PrecheckFiles& files, const PrecheckRunInfo& info,
                 const std::vector<PrecheckApiResult>& apis) {
  rapidjson::StringBuffer buffer;
  JsonWriter<rapidjson::StringBuffer> w(buffer, JsonFileKind::kResult);
  auto str = [&](std::string_view s) { w.String(s); };
  auto opt = [&](const std::optional<double>& v) {
    if (v) {
      w.Double(*v);
    } else {
      w.Null();
    }
  };
  auto row = [&](const PrecheckRow& r) {
    w.StartObject();
    str("name");
    str(r.name);
    str("bench_dtype");
    str(r.bench_dtype);
    str("device_dtype");
    str(r.device_dtype);
    str("shape");
    str(r.shape);
    for (size_t c = 0; c < kColumns.size(); ++c) {
      str(kColumns[c].key);
      opt(r.columns[c]);
    }
    str("status");
    str(EnumName(r.status));
    str("message");
    str(r.message);
    str("standard");
    str(r.standard);
    str("standard_result");
    str(r.standard.empty() ? "" : EnumName(r.standard_result));
    str("verdict");
    str(EnumName(r.verdict()));
    str("reason");
    str(r.reason);
    str("worst_index");
    w.Int64(r.worst_index);
    str("worst_device");
    opt(r.worst_device);
    str("worst_bench");
    opt(r.worst_bench);
    str("device");
    str(r.device);
    w.EndObject();
  };
  const PrecheckSummary s = Summarize(apis);
  w.StartObject();
  str("numprobe_precheck");
  w.Int(1);
  str("dump");
  str(info.dump);
  str("mode");
  str(info.mode);
  str("seed");
  w.Uint64(info.seed);
  str("device");
  str(info.device);
  str("result_csv");
  str(files.result_csv.filename().string());
  str("details_csv");
  str(files.details_csv.filename().string());
  str("summary");
  w.StartObject();
  str("apis");
  w.Int64(s.apis);
  str("pass");
  w.Int64(s.pass);
  str("warning");
  w.Int64(s.warning);
  str("error");
  w.Int64(s.error);
  str("skip");
  w.Int64(s.skip);
  w.EndObject();
  str("warnings");
  w.StartArray();
  for (const std::string& warning : info.warnings) str(warning);
  w.EndArray();
  str("apis");
  w.StartArray();
  for (const PrecheckApiResult& a : apis) {
    w.StartObject();
    str("api");
    str(a.api);
    str("forward");
    str(EnumName(a.forward));
    str("backward");
    str(EnumName(a.backward));
    str("message");
    str(a.message);
    str("verdict");
    str(EnumName(a.verdict));
    str("rows");
    w.StartArray();
    for (const auto* rows : {&a.forward_rows, &a.backward_rows}) {
      for (const PrecheckRow& r : *rows) row(r);
    }
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return detail::WriteFileAtomically(files.json,
                                     std::string_view(buffer.GetString(), buffer.GetSize()));
}

}  // namespace

namespace detail {

std::string Fixed14(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return fmt::format("{:.14f}", v);
}

}  // namespace detail

std::string_view PrecheckColumnHeader(PrecheckColumn column) { return kColumns[column].header; }
std::string_view PrecheckColumnKey(PrecheckColumn column) { return kColumns[column].key; }

PrecheckFiles PrecheckFilesIn(const fs::path& dir, std::string_view timestamp) {
  PrecheckFiles f;
  f.timestamp = std::string(timestamp);
  f.result_csv = dir / fmt::format("accuracy_checking_result_{}.csv", timestamp);
  f.details_csv = dir / fmt::format("accuracy_checking_details_{}.csv", timestamp);
  f.json = dir / fmt::format("precheck_{}.json", timestamp);
  return f;
}

Result<PrecheckFiles> PrecheckFilesOf(const fs::path& result_csv) {
  static const std::regex kName(R"(^accuracy_checking_result_(\d{14})\.csv$)");
  std::smatch match;
  const std::string name = result_csv.filename().string();
  if (!std::regex_match(name, match, kName)) {
    return Status::InvalidArgument(fmt::format(
        "{}: a result CSV to resume must keep its name accuracy_checking_result_{{timestamp}}.csv",
        result_csv.string()));
  }
  return PrecheckFilesIn(result_csv.parent_path(), match[1].str());
}

namespace {

Result<std::vector<PrecheckRow>> DetailsOf(const CsvRecords& t, const fs::path& path) {
  const auto index = HeaderIndex(t[0]);
  auto column = [&](std::string_view name) -> std::optional<size_t> {
    auto it = index.find(std::string(name));
    return it == index.end() ? std::nullopt : std::optional(it->second);
  };
  const auto name_col = column("API Name");
  const auto status_col = column("Status");
  if (!name_col || !status_col) {
    return Status::Corrupt(fmt::format(
        R"({}: not an accuracy_checking_details CSV (no "API Name" and "Status"))", path.string()));
  }
  std::vector<PrecheckRow> rows;
  for (size_t i = 1; i < t.size(); ++i) {
    const std::vector<std::string>& cells = t[i];
    auto get = [&](std::optional<size_t> c) -> std::string {
      return c && *c < cells.size() ? cells[*c] : std::string();
    };
    if (cells.size() == 1 && cells[0].empty()) continue;  // a blank line
    PrecheckRow r;
    r.name = get(name_col);
    r.bench_dtype = get(column("Bench Dtype"));
    r.device_dtype = get(column("DEVICE Dtype"));
    r.shape = get(column("Shape"));
    for (size_t c = 0; c < kColumns.size(); ++c) {
      r.columns[c] = ParseCell(get(column(kColumns[c].header)));
    }
    const auto status = EnumFromName<PrecheckStatus>(get(status_col));
    if (!status) {
      return Status::Corrupt(
          fmt::format("{}: line {}: unknown Status \"{}\"", path.string(), i + 1, get(status_col)));
    }
    r.status = *status;
    r.message = get(column("Message"));
    r.standard = get(column("Standard"));
    r.standard_result = EnumFromName<PrecheckStatus>(get(column("Standard Result")))
                            .value_or(PrecheckStatus::kNone);
    r.reason = get(column("Reason"));
    if (const std::string w = get(column("Worst Index")); !w.empty()) {
      // An element index ("12", or "12.0" from pandas when the column has blanks). Anything else
      // leaves it unknown.
      double v = 0;
      if (detail::ParsePyNumber(w, &v)) {
        if (const auto worst = WholeInt64(v); worst && *worst >= 0) r.worst_index = *worst;
      }
    }
    r.worst_device = ParseCell(get(column("Worst Device Value")));
    r.worst_bench = ParseCell(get(column("Worst Bench Value")));
    r.device = get(column("Device"));
    rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace

Result<std::vector<PrecheckRow>> ReadPrecheckDetails(const fs::path& path) {
  NUMPROBE_ASSIGN_OR_RETURN(CsvRecords t, ReadCsv(path));
  return DetailsOf(t, path);
}

Result<std::vector<PrecheckRow>> ParsePrecheckDetails(std::span<const char> bytes,
                                                      std::string_view label) {
  NUMPROBE_ASSIGN_OR_RETURN(CsvRecords t,
                            ParseCsvText(std::string_view(bytes.data(), bytes.size()), label));
  return DetailsOf(t, fs::path(label));
}

Result<std::vector<PrecheckApiResult>> ReadPrecheckResults(const fs::path& path) {
  NUMPROBE_ASSIGN_OR_RETURN(CsvRecords t, ReadCsv(path));
  const auto index = HeaderIndex(t[0]);
  if (!index.contains("API name") || !index.contains("Forward Test Success")) {
    return Status::Corrupt(fmt::format(
        R"({}: not an accuracy_checking_result CSV (no "API name" and "Forward Test Success"))",
        path.string()));
  }
  std::vector<PrecheckApiResult> apis;
  for (size_t i = 1; i < t.size(); ++i) {
    const std::vector<std::string>& cells = t[i];
    if (cells.size() == 1 && cells[0].empty()) continue;
    auto get = [&](std::string_view name) -> std::string {
      auto it = index.find(std::string(name));
      return it != index.end() && it->second < cells.size() ? cells[it->second] : std::string();
    };
    PrecheckApiResult a;
    a.api = get("API name");
    const auto fwd = EnumFromName<PrecheckStatus>(get("Forward Test Success"));
    const auto bwd = EnumFromName<PrecheckStatus>(get("Backward Test Success"));
    if (a.api.empty() || !fwd || !bwd) {
      return Status::Corrupt(
          fmt::format("{}: line {}: malformed result row", path.string(), i + 1));
    }
    a.forward = *fwd;
    a.backward = *bwd;
    a.message = get("Message");
    a.verdict = EnumFromName<PrecheckStatus>(get(kVerdictColumn)).value_or(PrecheckStatus::kNone);
    apis.push_back(std::move(a));
  }
  return apis;
}

struct PrecheckWriter::Impl {
  PrecheckFiles files;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> result{nullptr, &std::fclose};
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> details{nullptr, &std::fclose};
  std::set<std::string> done;
  std::vector<PrecheckApiResult> apis;
};

PrecheckWriter::PrecheckWriter() : impl_(std::make_unique<Impl>()) {}
PrecheckWriter::~PrecheckWriter() = default;
PrecheckWriter::PrecheckWriter(PrecheckWriter&&) noexcept = default;
PrecheckWriter& PrecheckWriter::operator=(PrecheckWriter&&) noexcept = default;

namespace {

Status Put(std::FILE* f, const std::string& text, const fs::path& path) {
  if (std::fwrite(text.data(), 1, text.size(), f) != text.size() || std::fflush(f) != 0) {
    return Status::IoError(
        fmt::format("{}: write failed: {}", path.string(), std::strerror(errno)));
  }
  return Status::Ok();
}

// The result tables grow row by row (a killed run resumes from them), so they are opened in
// place rather than through AtomicOutput, with the same refusal of non-regular files.
Status OpenTable(const fs::path& path, detail::WriteMode mode,
                 std::unique_ptr<std::FILE, int (*)(std::FILE*)>* file) {
  NUMPROBE_ASSIGN_OR_RETURN(detail::RegularFile opened,
                            detail::OpenRegularFileForWriting(path, mode));
  std::FILE* stream = ::fdopen(opened.fd(), mode == detail::WriteMode::kAppend ? "ab" : "wb");
  if (stream == nullptr) {
    return Status::IoError(
        fmt::format("{}: cannot write: {}", path.string(), std::strerror(errno)));
  }
  (void)opened.Release();  // the stream owns the descriptor now
  file->reset(stream);
  return Status::Ok();
}

}  // namespace

Result<PrecheckWriter> PrecheckWriter::Create(const fs::path& dir, std::string_view timestamp) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Status::IoError(fmt::format("{}: cannot create: {}", dir.string(), ec.message()));
  PrecheckWriter w;
  Impl& s = *w.impl_;
  s.files = PrecheckFilesIn(dir, timestamp);
  NUMPROBE_RETURN_IF_ERROR(OpenTable(s.files.result_csv, detail::WriteMode::kTruncate, &s.result));
  NUMPROBE_RETURN_IF_ERROR(
      OpenTable(s.files.details_csv, detail::WriteMode::kTruncate, &s.details));
  NUMPROBE_RETURN_IF_ERROR(
      Put(s.result.get(), std::string(kBom) + CsvWriterLine(ResultHeader()), s.files.result_csv));
  NUMPROBE_RETURN_IF_ERROR(
      Put(s.details.get(), std::string(kBom) + CsvWriterLine(DetailHeader()), s.files.details_csv));
  return w;
}

Result<PrecheckWriter> PrecheckWriter::Resume(const fs::path& result_csv) {
  NUMPROBE_ASSIGN_OR_RETURN(PrecheckFiles files, PrecheckFilesOf(result_csv));
  NUMPROBE_ASSIGN_OR_RETURN(std::vector<PrecheckApiResult> apis, ReadPrecheckResults(result_csv));
  NUMPROBE_ASSIGN_OR_RETURN(std::vector<PrecheckRow> rows, ReadPrecheckDetails(files.details_csv));
  PrecheckWriter w;
  Impl& s = *w.impl_;
  s.files = files;
  std::map<std::string, size_t> by_api;
  for (size_t i = 0; i < apis.size(); ++i) {
    by_api.emplace(apis[i].api, i);
    s.done.insert(apis[i].api);
  }
  for (PrecheckRow& r : rows) {
    bool backward = false;
    auto it = by_api.find(ApiOfRow(r.name, &backward));
    if (it == by_api.end()) continue;  // a row whose API line was never written: run it again
    auto& list = backward ? apis[it->second].backward_rows : apis[it->second].forward_rows;
    list.push_back(std::move(r));
  }
  for (PrecheckApiResult& a : apis) {
    if (a.verdict == PrecheckStatus::kNone) {  // msprobe's own files: derive numprobe's verdict
      const PrecheckStatus fwd = a.forward;
      const PrecheckStatus bwd = a.backward;
      const std::string message = a.message;
      Aggregate(&a);
      a.forward = fwd;
      a.backward = bwd;
      a.message = message;
      if (a.forward_rows.empty() && a.backward_rows.empty()) a.verdict = WorseStatus(fwd, bwd);
    }
  }
  s.apis = std::move(apis);
  NUMPROBE_RETURN_IF_ERROR(OpenTable(files.result_csv, detail::WriteMode::kAppend, &s.result));
  NUMPROBE_RETURN_IF_ERROR(OpenTable(files.details_csv, detail::WriteMode::kAppend, &s.details));
  return w;
}

const PrecheckFiles& PrecheckWriter::files() const { return impl_->files; }
const std::set<std::string>& PrecheckWriter::done() const { return impl_->done; }
const std::vector<PrecheckApiResult>& PrecheckWriter::apis() const { return impl_->apis; }

Status PrecheckWriter::Append(const PrecheckApiResult& api) {
  Impl& s = *impl_;
  std::string details;
  for (const auto* rows : {&api.forward_rows, &api.backward_rows}) {
    for (const PrecheckRow& r : *rows) details += CsvWriterLine(DetailCells(r));
  }
  // Details first: a result line is only there once its rows are (resume trusts result lines).
  NUMPROBE_RETURN_IF_ERROR(Put(s.details.get(), details, s.files.details_csv));
  NUMPROBE_RETURN_IF_ERROR(
      Put(s.result.get(), CsvWriterLine(ResultCells(api)), s.files.result_csv));
  s.done.insert(api.api);
  s.apis.push_back(api);
  return Status::Ok();
}

Status PrecheckWriter::Finish(const PrecheckRunInfo& info) {
  return WriteTwin(impl_->files, info, impl_->apis);
}

}  // namespace numprobe
