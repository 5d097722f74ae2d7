#include "ui/workspace.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <rapidjson/error/en.h>
#include <rapidjson/filereadstream.h>
#include <rapidjson/reader.h>

#include "numprobe/compare.h"
#include "numprobe/compare_trees.h"
#include "numprobe/divergence.h"
#include "numprobe/dump.h"
#include "numprobe/dump_layout.h"

#include "compare/compare_internal.h"
#include "core/py_format.h"

namespace numprobe::ui {

namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxColumns = 1024;
constexpr size_t kMaxCellBytes = size_t{16} << 20;
constexpr uintmax_t kMaxDivergenceBytes = uintmax_t{16} << 20;
constexpr uintmax_t kMaxScanBytes = uintmax_t{512} << 20;
constexpr int kMaxWalkDepth = 4;

struct FileCloser {
  void operator()(std::FILE* f) const {
    if (f != nullptr) std::fclose(f);
  }
};

// SAX handler for a compare JSON twin: {"numprobe_compare": 1, "mode", "target", "golden",
// "columns": [...], "rows": [[...], ...], "counts": {...}}.
class TwinHandler : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, TwinHandler> {
 public:
  bool StartObject() { return Open(false); }
  bool EndObject(rapidjson::SizeType) { return Close(); }
  bool StartArray() {
    if (depth_ == 1 && key_ == "columns") {
      in_columns_ = true;
    } else if (depth_ == 1 && key_ == "rows") {
      if (!builder_) return Fail(R"("rows" comes before "columns")");
      in_rows_ = true;
    } else if (in_rows_ && depth_ == 2) {
      in_row_ = true;
      cells_.clear();
      ++row_number_;
    }
    return Open(true);
  }
  bool EndArray(rapidjson::SizeType) {
    if (in_row_ && depth_ == 3) {
      in_row_ = false;
      if (!FinishRow()) return false;
    } else if (in_columns_ && depth_ == 2) {
      in_columns_ = false;
      if (columns_.empty()) return Fail("\"columns\" is empty");
      builder_ = std::make_unique<ResultStoreBuilder>(columns_);
    } else if (in_rows_ && depth_ == 2) {
      in_rows_ = false;
    }
    return Close();
  }
  bool Key(const char* s, rapidjson::SizeType len, bool) {
    if (depth_ == 1) {
      key_.assign(s, len);
      if (key_ == "numprobe_compare") seen_marker_ = true;
    }
    return true;
  }
  bool String(const char* s, rapidjson::SizeType len, bool) {
    const std::string_view text(s, len);
    if (in_row_ && depth_ == 3) return AddCell(false, 0, text);
    if (in_columns_ && depth_ == 2) {
      if (columns_.size() >= kMaxColumns) return Fail("more than 1024 columns");
      columns_.emplace_back(text);
      return true;
    }
    if (depth_ == 1) {
      if (key_ == "mode") mode_ = std::string(text);
      if (key_ == "target") target_ = std::string(text);
      if (key_ == "golden") golden_ = std::string(text);
    }
    return Scalar();
  }
  bool Double(double v) {
    if (in_row_ && depth_ == 3) {
      return std::isfinite(v) ? AddCell(true, v, {})
                              : AddCell(false, 0, std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf"));
    }
    return Scalar();
  }
  bool Int(int v) { return Double(v); }
  bool Uint(unsigned v) { return Double(v); }
  bool Int64(int64_t v) { return Double(static_cast<double>(v)); }
  bool Uint64(uint64_t v) { return Double(static_cast<double>(v)); }
  bool Bool(bool b) {
    if (in_row_ && depth_ == 3) return AddCell(false, 0, b ? "True" : "False");
    return Scalar();
  }
  bool Null() {
    if (in_row_ && depth_ == 3) return AddCell(false, 0, "");
    return Scalar();
  }

  Status status() const { return status_; }
  bool seen_marker() const { return seen_marker_; }
  LoadedTable Take() {
    LoadedTable t;
    if (builder_) t.store = builder_->Finish();
    t.mode = mode_;
    t.target = target_;
    t.golden = golden_;
    return t;
  }

 private:
  bool Open(bool array) {
    if (in_row_ && depth_ >= 3)
      return Fail(fmt::format("row {} holds a nested value", row_number_));
    if (in_rows_ && depth_ == 2 && !array) return Fail("a row is not an array");
    if (depth_ == 0 && array) return Fail("the root is not an object");
    ++depth_;
    return true;
  }
  bool Close() {
    --depth_;
    return true;
  }
  bool Scalar() {
    if (depth_ == 0) return Fail("the root is not an object");
    if (in_rows_ && depth_ == 2) return Fail("a row is not an array");
    return true;
  }
  bool Fail(std::string message) {
    status_ = Status::Corrupt(std::move(message));
    return false;
  }
  bool AddCell(bool number, double v, std::string_view text) {
    if (cells_.size() >= columns_.size()) {
      return Fail(
          fmt::format("row {} has more cells than the {} columns", row_number_, columns_.size()));
    }
    if (text.size() > kMaxCellBytes) {
      return Fail(fmt::format("row {} has a cell of {} bytes", row_number_, text.size()));
    }
    if (texts_.size() <= cells_.size()) texts_.resize(cells_.size() + 1);
    if (number) {
      cells_.push_back(Cell::Number(v));
    } else {
      texts_[cells_.size()].assign(text);
      cells_.push_back(Cell::Text({}));
    }
    return true;
  }
  bool FinishRow() {
    if (cells_.size() != columns_.size()) {
      return Fail(fmt::format("row {} has {} cells, expected {}", row_number_, cells_.size(),
                              columns_.size()));
    }
    for (size_t i = 0; i < cells_.size(); ++i) {
      if (!cells_[i].is_number) cells_[i].text = texts_[i];
    }
    const Cell& name = cells_[name_column()];
    const std::string_view entry = EntryOfRow(name.is_number ? std::string_view() : name.text);
    Status s = builder_->AddRow(cells_, entry);
    if (!s.ok()) {
      status_ = s;
      return false;
    }
    return true;
  }
  size_t name_column() const {
    for (size_t i = 0; i < columns_.size(); ++i) {
      if (columns_[i] == "NPU Name") return i;
    }
    return 0;
  }

  int depth_ = 0;
  std::string key_;
  bool seen_marker_ = false;
  bool in_columns_ = false;
  bool in_rows_ = false;
  bool in_row_ = false;
  uint64_t row_number_ = 0;
  std::vector<std::string> columns_;
  std::vector<Cell> cells_;
  std::vector<std::string> texts_;
  std::unique_ptr<ResultStoreBuilder> builder_;
  std::string mode_, target_, golden_;
  Status status_;
};

Cell CellOfText(const std::string& text) {
  double v = 0;
  if (detail::ParsePyNumber(text, &v) && std::isfinite(v)) return Cell::Number(v);
  return Cell::Text(text);
}

// Adds one row of texts, numbers typed as the JSON twin types them.
Status AddTextRow(ResultStoreBuilder* builder, const std::vector<std::string>& texts,
                  std::string_view entry) {
  std::vector<Cell> cells;
  cells.reserve(texts.size());
  for (const std::string& t : texts) cells.push_back(CellOfText(t));
  return builder->AddRow(cells, entry);
}

int64_t TrailingNumber(std::string_view s, std::string_view prefix) {
  if (!s.starts_with(prefix) || s.size() == prefix.size()) return -1;
  int64_t n = 0;
  for (const char c : s.substr(prefix.size())) {
    if (c < '0' || c > '9' || n > (int64_t{1} << 40)) return -1;
    n = n * 10 + (c - '0');
  }
  return n;
}

int64_t StepOfScope(const std::string& scope) {
  int64_t step = -1;
  for (const auto& part : fs::path(scope)) {
    const int64_t n = TrailingNumber(part.string(), "step");
    if (n >= 0) step = n;
  }
  return step;
}

std::string JoinLabel(const std::string& scope, const std::string& rank) {
  if (scope.empty()) return rank;
  if (rank.empty()) return scope;
  return scope + "/" + rank;
}

// Builds the run's tree (with `construct`'s nesting when there is one) and findings.
void FinishRun(Run* run, const ConstructMap* construct) {
  run->has_construct = construct != nullptr;
  run->tree = ModelTree::Build(*run->store, construct);
  run->findings = AnalyzeFindings(*run->store);
}

// As above, with construct.json read (a warning when it cannot be).
void FinishRun(Run* run, const fs::path& construct_json, std::vector<std::string>* warnings) {
  std::optional<ConstructMap> construct;
  if (!construct_json.empty()) {
    std::error_code ec;
    if (fs::is_regular_file(construct_json, ec)) {
      auto map = ReadConstructJson(construct_json);
      if (map) {
        construct = std::move(*map);
      } else {
        warnings->push_back(map.error().message());
      }
    }
  }
  FinishRun(run, construct ? &*construct : nullptr);
}

AnalysedOp AnalysedOf(const DivergenceOp& op) {
  AnalysedOp a;
  a.op_name = op.op_name;
  a.reason = op.reason;
  a.input_error = op.input_error;
  a.output_error = op.output_error;
  a.tolerance = op.tolerance;
  a.growth = op.growth;
  a.worst_output = op.worst_output;
  a.dtypes = op.dtype_pair;
  a.non_finite = op.non_finite;
  a.module_path = op.module_path;
  a.stack = op.stack;
  return a;
}

// An op object of divergence_{ts}.json (divergence_writer.cc); numbers may be written as
// "Infinity"/"NaN" strings.
std::optional<AnalysedOp> AnalysedOf(const rapidjson::Value& v) {
  if (!v.IsObject()) return std::nullopt;
  AnalysedOp a;
  auto text = [&v](const char* key) {
    const auto it = v.FindMember(key);
    return it != v.MemberEnd() && it->value.IsString()
               ? std::string(it->value.GetString(), it->value.GetStringLength())
               : std::string();
  };
  auto number = [&v](const char* key) {
    const auto it = v.FindMember(key);
    if (it == v.MemberEnd()) return std::nan("");
    if (it->value.IsNumber()) return it->value.GetDouble();
    if (it->value.IsString()) {
      const std::string_view t(it->value.GetString(), it->value.GetStringLength());
      if (t == "Infinity" || t == "inf") return std::numeric_limits<double>::infinity();
      if (t == "-Infinity" || t == "-inf") return -std::numeric_limits<double>::infinity();
    }
    return std::nan("");
  };
  auto lines = [&v](const char* key) {
    std::vector<std::string> out;
    const auto it = v.FindMember(key);
    if (it == v.MemberEnd() || !it->value.IsArray()) return out;
    for (const auto& x : it->value.GetArray()) {
      if (x.IsString()) out.emplace_back(x.GetString(), x.GetStringLength());
    }
    return out;
  };
  a.op_name = text("op_name");
  if (a.op_name.empty()) return std::nullopt;
  a.reason = text("reason");
  a.input_error = number("input_error");
  a.output_error = number("output_error");
  a.tolerance = number("tolerance");
  a.growth = number("growth");
  a.worst_output = text("worst_output");
  a.dtypes = text("dtypes");
  const auto nf = v.FindMember("non_finite");
  a.non_finite = nf != v.MemberEnd() && nf->value.IsBool() && nf->value.GetBool();
  a.module_path = lines("module_path");
  a.stack = lines("stack");
  return a;
}

// Applies the analysis that divergence_{ts}.json records for (scope, rank) to `run`, if any.
void ApplyDivergenceFile(const rapidjson::Document& doc, const std::string& scope,
                         const std::string& rank, Run* run) {
  if (!doc.IsObject() || !doc.HasMember("ranks") || !doc["ranks"].IsArray()) return;
  for (const auto& r : doc["ranks"].GetArray()) {
    if (!r.IsObject() || !r.HasMember("scope") || !r.HasMember("rank") || !r["scope"].IsString() ||
        !r["rank"].IsString() || scope != r["scope"].GetString() || rank != r["rank"].GetString()) {
      continue;
    }
    std::optional<AnalysedOp> first;
    if (r.HasMember("first")) first = AnalysedOf(r["first"]);
    std::vector<AnalysedOp> next;
    if (r.HasMember("next") && r["next"].IsArray()) {
      for (const auto& op : r["next"].GetArray()) {
        if (auto a = AnalysedOf(op)) next.push_back(std::move(*a));
      }
    }
    std::string over;
    if (r.HasMember("first_over_tolerance") && r["first_over_tolerance"].IsString()) {
      over = r["first_over_tolerance"].GetString();
    }
    ApplyAnalysis(*run->store, first, next, std::move(over), &run->findings);
    return;
  }
}

// The dump folder a twin names ("target": ".../dump.json"); tried as written, then relative to
// the result file's folder.
fs::path DumpDirOf(const std::string& label, const fs::path& result_dir) {
  if (label.empty()) return {};
  std::error_code ec;
  fs::path p(label);
  if (fs::is_regular_file(p, ec)) return p.parent_path();
  if (p.is_relative() && fs::is_regular_file(result_dir / p, ec))
    return (result_dir / p).parent_path();
  return {};
}

fs::path TensorDirIn(const fs::path& dir) {
  if (dir.empty()) return {};
  std::error_code ec;
  const fs::path t = dir / "dump_tensor_data";
  return fs::is_directory(t, ec) ? t : fs::path();
}

Result<std::string> ReadSmallFile(const fs::path& path, uintmax_t cap) {
  std::error_code ec;
  const uintmax_t size = fs::file_size(path, ec);
  if (ec) return Status::IoError(fmt::format("{}: {}", path.string(), ec.message()));
  if (size > cap) {
    return Status::OutOfRange(
        fmt::format("{}: {} bytes exceeds the {} byte limit", path.string(), size, cap));
  }
  std::unique_ptr<std::FILE, FileCloser> f(std::fopen(path.c_str(), "rb"));
  if (!f) return Status::IoError(fmt::format("{}: cannot open", path.string()));
  std::string text(size, '\0');
  if (size > 0 && std::fread(text.data(), 1, size, f.get()) != size) {
    return Status::IoError(fmt::format("{}: short read", path.string()));
  }
  return text;
}

Status LoadScan(const fs::path& path, Workspace* ws) {
  NUMPROBE_ASSIGN_OR_RETURN(std::string text, ReadSmallFile(path, kMaxScanBytes));
  ScanData scan;
  scan.file = path.string();
  scan.doc.Parse<rapidjson::kParseNanAndInfFlag>(text.data(), text.size());
  if (scan.doc.HasParseError()) {
    return Status::Corrupt(fmt::format("{}: malformed JSON at byte {}: {}", path.string(),
                                       scan.doc.GetErrorOffset(),
                                       rapidjson::GetParseError_En(scan.doc.GetParseError())));
  }
  if (!scan.doc.IsObject()) {
    return Status::Corrupt(fmt::format("{}: the root is not an object", path.string()));
  }
  ws->scan = std::move(scan);
  return Status::Ok();
}

// One dump shown on its own: a table of its tensors' statistics; rows whose statistics are
// NaN/Inf are marked "error".
Status AddDumpRun(const DumpLocation& loc, const std::string& scope, const std::string& rank,
                  Workspace* ws) {
  NUMPROBE_ASSIGN_OR_RETURN(DumpFile file, ReadDumpJson(loc.dump_json));
  std::optional<StackMap> stack;
  if (!loc.stack_json.empty()) {
    NUMPROBE_ASSIGN_OR_RETURN(stack, ReadStackJson(loc.stack_json));
  }
  ResultStoreBuilder builder({"NPU Name", "NPU Dtype", "NPU Tensor Shape", "NPU max", "NPU min",
                              "NPU mean", "NPU l2norm", "NPU Requires_grad", "Result",
                              "Err_message", "NPU_Stack_Info", "Data_name"});
  std::vector<std::string> texts;
  for (const DumpEntry& entry : file.entries) {
    const std::vector<std::string>* lines = stack ? stack->Find(entry.name) : nullptr;
    for (uint32_t r = entry.first_row; r < entry.first_row + entry.row_count; ++r) {
      const DumpRow& row = file.rows[r];
      texts.clear();
      texts.push_back(row.name);
      texts.push_back(file.Text(row.dtype));
      texts.push_back(file.Text(row.shape));
      bool nonfinite = false;
      for (int k = 0; k < 4; ++k) {
        texts.push_back(detail::SummaryCsvText(detail::SummaryOf(file, row.stats[k])));
        nonfinite = nonfinite || IsNonFiniteText(texts.back());
      }
      texts.push_back(detail::RequiresGradText(file, row));
      texts.emplace_back(nonfinite ? "error" : "pass");
      texts.push_back(detail::JsonStringList(nonfinite
                                                 ? std::vector<std::string>{"non-finite statistics"}
                                                 : std::vector<std::string>{}));
      texts.push_back(lines != nullptr && r == entry.first_row ? detail::PyStrListRepr(*lines)
                                                               : "N/A");
      texts.push_back(detail::PyStrListRepr({row.data_name.empty() ? "-1" : row.data_name}));
      NUMPROBE_RETURN_IF_ERROR(AddTextRow(&builder, texts, entry.name));
    }
  }
  auto run = std::make_unique<Run>();
  run->scope = scope;
  run->rank_folder = rank;
  run->label = JoinLabel(scope, rank).empty() ? "dump.json" : JoinLabel(scope, rank);
  run->step = StepOfScope(scope);
  run->rank = TrailingNumber(rank, "rank");
  run->mode = "dump";
  run->source = loc.dump_json.string();
  run->target = loc.dump_json.string();
  run->target_tensors = TensorDirIn(loc.dir);
  run->store = builder.Finish();
  FinishRun(run.get(), loc.construct_json, &ws->warnings);
  ws->runs.push_back(std::move(run));
  return Status::Ok();
}

Status AddComparedRun(const RankCompare& rank, Workspace* ws) {
  const CompareTable& table = rank.table;
  const DumpPair& pair = rank.pair;
  ResultStoreBuilder builder(table.Header());
  for (size_t i = 0; i < table.rows.size(); ++i) {
    const DumpRow& row = table.target->rows[table.rows[i].target];
    NUMPROBE_RETURN_IF_ERROR(
        AddTextRow(&builder, table.CsvCells(i), table.target->entries[row.entry].name));
  }
  auto run = std::make_unique<Run>();
  run->scope = pair.scope;
  run->rank_folder = pair.rank;
  run->label = rank.label;
  run->step = StepOfScope(pair.scope);
  run->rank = TrailingNumber(pair.rank, "rank");
  run->mode = std::string(EnumName(table.mode));
  run->source = "compared on the fly";
  run->target = pair.target->dump_json.string();
  run->golden = pair.golden->dump_json.string();
  run->target_tensors = TensorDirIn(pair.target->dir);
  run->golden_tensors = TensorDirIn(pair.golden->dir);
  run->store = builder.Finish();
  FinishRun(run.get(), rank.has_construct ? &rank.construct : nullptr);
  const DivergenceReport& report = rank.report;
  std::optional<AnalysedOp> first;
  if (report.first) first = AnalysedOf(*report.first);
  std::vector<AnalysedOp> next;
  for (const DivergenceOp& op : report.next) next.push_back(AnalysedOf(op));
  ApplyAnalysis(*run->store, first, next, report.first_over_tolerance, &run->findings);
  for (const std::string& w : table.warnings) ws->warnings.push_back(run->label + ": " + w);
  ws->runs.push_back(std::move(run));
  return Status::Ok();
}

Status AddTwinRun(const fs::path& file, const std::string& scope, const std::string& rank,
                  const rapidjson::Document* divergence, Workspace* ws) {
  NUMPROBE_ASSIGN_OR_RETURN(LoadedTable table, ReadCompareJson(file));
  auto run = std::make_unique<Run>();
  run->scope = scope;
  run->rank_folder = rank;
  run->label = JoinLabel(scope, rank).empty() ? file.filename().string() : JoinLabel(scope, rank);
  run->step = StepOfScope(scope);
  run->rank = TrailingNumber(rank, "rank");
  run->mode = table.mode.empty() ? "statistics" : table.mode;
  run->source = file.string();
  run->target = table.target;
  run->golden = table.golden;
  const fs::path target_dir = DumpDirOf(table.target, file.parent_path());
  const fs::path golden_dir = DumpDirOf(table.golden, file.parent_path());
  run->target_tensors = TensorDirIn(target_dir);
  run->golden_tensors = TensorDirIn(golden_dir);
  run->store = std::move(table.store);
  if (!table.target.empty() && target_dir.empty()) {
    ws->warnings.push_back(
        fmt::format("{}: the target dump {} was not found; no model nesting or tensor files",
                    run->label, table.target));
  }
  FinishRun(run.get(), target_dir.empty() ? fs::path() : target_dir / "construct.json",
            &ws->warnings);
  if (divergence != nullptr) ApplyDivergenceFile(*divergence, scope, rank, run.get());
  ws->runs.push_back(std::move(run));
  return Status::Ok();
}

// compare_result_{rank}_{ts}.json -> (rank, ts); compare_result_{ts}.json -> ("", ts).
std::pair<std::string, std::string> SplitResultName(const std::string& stem) {
  const std::string rest = stem.substr(std::string("compare_result_").size());
  const size_t us = rest.rfind('_');
  if (us == std::string::npos) return {"", rest};
  return {rest.substr(0, us), rest.substr(us + 1)};
}

struct Found {
  std::vector<fs::path> twins;
  std::vector<fs::path> divergences;
  std::vector<fs::path> scans;
};

// Collects result files under `root`, at most kMaxWalkDepth folders deep, without following
// symbolic links out of it.
void Walk(const fs::path& root, Found* found) {
  std::error_code ec;
  fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it.depth() >= kMaxWalkDepth) it.disable_recursion_pending();
    const fs::directory_entry& e = *it;
    if (e.is_symlink(ec) || !e.is_regular_file(ec)) continue;
    const std::string name = e.path().filename().string();
    if (!name.ends_with(".json")) continue;
    if (name.starts_with("compare_result_")) found->twins.push_back(e.path());
    if (name.starts_with("divergence_")) found->divergences.push_back(e.path());
    if (name.starts_with("scan_")) found->scans.push_back(e.path());
  }
  for (auto* list : {&found->twins, &found->divergences, &found->scans}) {
    std::sort(list->begin(), list->end());
  }
}

// divergence_{ts}.json of `ts` among `files`, parsed; null when absent or unreadable (noted).
std::unique_ptr<rapidjson::Document> ReadDivergence(const std::vector<fs::path>& files,
                                                    const std::string& ts, Workspace* ws) {
  for (const fs::path& f : files) {
    if (f.filename() != "divergence_" + ts + ".json") continue;
    auto text = ReadSmallFile(f, kMaxScanBytes);
    if (!text) {
      ws->warnings.push_back(text.error().message());
      return nullptr;
    }
    auto doc = std::make_unique<rapidjson::Document>();
    doc->Parse<rapidjson::kParseNanAndInfFlag>(text->data(), text->size());
    if (doc->HasParseError() || !doc->IsObject()) {
      ws->warnings.push_back(
          fmt::format("{}: malformed JSON; its analysis is not shown", f.string()));
      return nullptr;
    }
    return doc;
  }
  return nullptr;
}

Status LoadTwins(const fs::path& root, const std::vector<fs::path>& twins,
                 const std::vector<fs::path>& divergences, Workspace* ws) {
  // Newest timestamp per (scope, rank).
  std::map<std::pair<std::string, std::string>, std::pair<std::string, fs::path>> newest;
  for (const fs::path& p : twins) {
    const auto [rank, ts] = SplitResultName(p.stem().string());
    std::error_code ec;
    std::string scope = fs::relative(p.parent_path(), root, ec).generic_string();
    if (ec || scope == ".") scope.clear();
    auto& slot = newest[{scope, rank}];
    if (slot.second.empty() || ts > slot.first) {
      if (!slot.second.empty()) {
        ws->warnings.push_back(fmt::format("{} is older than {}; not shown",
                                           slot.second.filename().string(), p.filename().string()));
      }
      slot = {ts, p};
    } else {
      ws->warnings.push_back(fmt::format("{} is older than {}; not shown", p.filename().string(),
                                         slot.second.filename().string()));
    }
  }
  std::map<std::string, std::unique_ptr<rapidjson::Document>> analyses;  // by timestamp
  for (const auto& [key, value] : newest) {
    auto& doc = analyses[value.first];
    if (!doc) doc = ReadDivergence(divergences, value.first, ws);
    NUMPROBE_RETURN_IF_ERROR(AddTwinRun(value.second, key.first, key.second, doc.get(), ws));
  }
  return Status::Ok();
}

Status LoadDumpTree(const fs::path& path, Workspace* ws) {
  NUMPROBE_ASSIGN_OR_RETURN(auto pairs, DiscoverDumpPairs(path, path));
  for (const DumpPair& p : pairs) {
    if (p.target) NUMPROBE_RETURN_IF_ERROR(AddDumpRun(*p.target, p.scope, p.rank, ws));
  }
  return Status::Ok();
}

void SortRuns(Workspace* ws) {
  std::stable_sort(ws->runs.begin(), ws->runs.end(), [](const auto& a, const auto& b) {
    if (a->step != b->step) return a->step < b->step;
    if (a->scope != b->scope) return a->scope < b->scope;
    if (a->rank != b->rank) return a->rank < b->rank;
    return a->rank_folder < b->rank_folder;
  });
}

}  // namespace

Result<LoadedTable> ReadCompareJson(const fs::path& path) {
  std::unique_ptr<std::FILE, FileCloser> f(std::fopen(path.c_str(), "rb"));
  if (!f) return Status::IoError(fmt::format("{}: cannot open", path.string()));
  char buffer[1 << 16];
  rapidjson::FileReadStream stream(f.get(), buffer, sizeof(buffer));
  TwinHandler handler;
  rapidjson::Reader reader;
  const rapidjson::ParseResult ok =
      reader.Parse<rapidjson::kParseNanAndInfFlag | rapidjson::kParseFullPrecisionFlag |
                   rapidjson::kParseIterativeFlag>(stream, handler);
  if (!ok) {
    if (!handler.status().ok()) return handler.status().WithContext(path.string());
    return Status::Corrupt(fmt::format("{}: malformed JSON at byte {}: {}", path.string(),
                                       ok.Offset(), rapidjson::GetParseError_En(ok.Code())));
  }
  if (!handler.seen_marker()) {
    return Status::Corrupt(
        fmt::format("{}: not a numprobe compare result (no \"numprobe_compare\")", path.string()));
  }
  LoadedTable table = handler.Take();
  if (!table.store) {
    return Status::Corrupt(fmt::format(R"({}: no "columns" and "rows")", path.string()));
  }
  return table;
}

std::optional<std::vector<std::string>> ParsePyStrList(std::string_view text) {
  std::vector<std::string> out;
  size_t i = 0;
  auto skip_space = [&] {
    while (i < text.size() && text[i] == ' ') ++i;
  };
  skip_space();
  if (i >= text.size() || text[i] != '[') return std::nullopt;
  ++i;
  skip_space();
  if (i < text.size() && text[i] == ']') return out;
  while (i < text.size()) {
    const char quote = text[i];
    if (quote != '\'' && quote != '"') return std::nullopt;
    ++i;
    std::string item;
    bool closed = false;
    while (i < text.size()) {
      const char c = text[i++];
      if (c == quote) {
        closed = true;
        break;
      }
      if (c != '\\' || i >= text.size()) {
        item += c;
        continue;
      }
      const char e = text[i++];
      switch (e) {
        case 'n':
          item += '\n';
          break;
        case 't':
          item += '\t';
          break;
        case 'r':
          item += '\r';
          break;
        case '\\':
        case '\'':
        case '"':
          item += e;
          break;
        case 'x':
        case 'u':
        case 'U': {
          const size_t digits = e == 'x' ? 2 : (e == 'u' ? 4 : 8);
          if (i + digits > text.size()) return std::nullopt;
          uint32_t cp = 0;
          for (size_t k = 0; k < digits; ++k) {
            const char h = text[i + k];
            const int v = (h >= '0' && h <= '9')   ? h - '0'
                          : (h >= 'a' && h <= 'f') ? h - 'a' + 10
                          : (h >= 'A' && h <= 'F') ? h - 'A' + 10
                                                   : -1;
            if (v < 0) return std::nullopt;
            cp = cp * 16 + static_cast<uint32_t>(v);
          }
          i += digits;
          if (cp > 0x10FFFF) return std::nullopt;
          // UTF-8 encode.
          if (cp < 0x80) {
            item += static_cast<char>(cp);
          } else if (cp < 0x800) {
            item += static_cast<char>(0xC0 | (cp >> 6));
            item += static_cast<char>(0x80 | (cp & 0x3F));
          } else if (cp < 0x10000) {
            item += static_cast<char>(0xE0 | (cp >> 12));
            item += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            item += static_cast<char>(0x80 | (cp & 0x3F));
          } else {
            item += static_cast<char>(0xF0 | (cp >> 18));
            item += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
            item += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            item += static_cast<char>(0x80 | (cp & 0x3F));
          }
          break;
        }
        default:
          item += '\\';
          item += e;
      }
    }
    if (!closed) return std::nullopt;
    out.push_back(std::move(item));
    skip_space();
    if (i < text.size() && text[i] == ',') {
      ++i;
      skip_space();
      continue;
    }
    if (i < text.size() && text[i] == ']') {
      ++i;
      skip_space();
      return i == text.size() ? std::optional(out) : std::nullopt;
    }
    return std::nullopt;
  }
  return std::nullopt;
}

Result<std::unique_ptr<Workspace>> LoadWorkspace(const fs::path& path, const LoadOptions& options) {
  auto ws = std::make_unique<Workspace>();
  ws->paths.push_back(path.string());
  std::error_code ec;
  if (!fs::exists(path, ec))
    return Status::NotFound(fmt::format("{}: no such file or folder", path.string()));

  if (!options.golden.empty()) {
    ws->kind = "dumps";
    ws->paths.push_back(options.golden.string());
    CompareTreesOptions compare;
    compare.warning = [&ws](std::string_view message) { ws->warnings.emplace_back(message); };
    compare.construct_errors_warn = true;
    NUMPROBE_ASSIGN_OR_RETURN(const CompareTreesResult compared,
                              CompareDumpTrees(path, options.golden, compare));
    for (const MissingRank& m : compared.missing) {
      ws->warnings.push_back(fmt::format("{}: only in the {} dump; not compared", m.label,
                                         m.in_target ? "target" : "golden"));
    }
    for (const RankCompare& rank : compared.ranks) {
      NUMPROBE_RETURN_IF_ERROR(AddComparedRun(rank, ws.get()));
    }
    if (ws->runs.empty()) return Status::NotFound("no rank is present in both dumps");
    SortRuns(ws.get());
    return ws;
  }

  if (fs::is_regular_file(path, ec)) {
    const std::string name = path.filename().string();
    if (name.starts_with("scan_") && name.ends_with(".json")) {
      ws->kind = "scan";
      NUMPROBE_RETURN_IF_ERROR(LoadScan(path, ws.get()));
      return ws;
    }
    if (name == "dump.json" || name == "debug.json") {
      ws->kind = "dump";
      NUMPROBE_RETURN_IF_ERROR(LoadDumpTree(path, ws.get()));
      return ws;
    }
    // A lone twin: its analysis is beside it, or in a folder above (compare writes the twins of
    // step folders below the output folder, and divergence_{ts}.json in it).
    ws->kind = "compare";
    const std::string stem = path.stem().string();
    const auto [rank, ts] = stem.starts_with("compare_result_")
                                ? SplitResultName(stem)
                                : std::pair<std::string, std::string>();
    std::unique_ptr<rapidjson::Document> analysis;
    std::string scope;
    fs::path dir = path.parent_path();
    for (int up = 0; up < kMaxWalkDepth && !ts.empty() && !analysis; ++up) {
      std::vector<fs::path> candidate = {dir / ("divergence_" + ts + ".json")};
      if (fs::is_regular_file(candidate[0], ec)) {
        analysis = ReadDivergence(candidate, ts, ws.get());
        scope = fs::relative(path.parent_path(), dir, ec).generic_string();
        if (ec || scope == ".") scope.clear();
        break;
      }
      if (!dir.has_parent_path() || dir.parent_path() == dir) break;
      dir = dir.parent_path();
    }
    NUMPROBE_RETURN_IF_ERROR(AddTwinRun(path, scope, rank, analysis.get(), ws.get()));
    return ws;
  }

  Found found;
  Walk(path, &found);
  if (!found.scans.empty()) NUMPROBE_RETURN_IF_ERROR(LoadScan(found.scans.back(), ws.get()));
  if (!found.divergences.empty()) {
    const fs::path& d = found.divergences.back();
    auto text = ReadSmallFile(d, kMaxDivergenceBytes);
    if (text) {
      ws->divergence_file = d.string();
      ws->divergence_json = std::move(*text);
    } else {
      ws->warnings.push_back(text.error().message());
    }
  }
  if (!found.twins.empty()) {
    ws->kind = "compare";
    NUMPROBE_RETURN_IF_ERROR(LoadTwins(path, found.twins, found.divergences, ws.get()));
    SortRuns(ws.get());
    return ws;
  }
  if (ws->scan) {
    ws->kind = "scan";
    // Show the scanned dump's tables too, when it is still there.
    const auto* dump = ws->scan->doc.IsObject() && ws->scan->doc.HasMember("dump")
                           ? &ws->scan->doc["dump"]
                           : nullptr;
    if (dump != nullptr && dump->IsString()) {
      const fs::path dump_path(dump->GetString());
      if (fs::exists(dump_path, ec)) {
        Status s = LoadDumpTree(dump_path, ws.get());
        if (!s.ok()) ws->warnings.push_back(s.message());
      }
    }
    SortRuns(ws.get());
    return ws;
  }
  ws->kind = "dump";
  Status s = LoadDumpTree(path, ws.get());
  if (!s.ok()) {
    if (s.code() == ErrorCode::kNotFound) {
      return Status::NotFound(fmt::format(
          "{}: holds no compare results (compare_result_*.json), scan output (scan_*.json) or "
          "dump (dump.json)",
          path.string()));
    }
    return s;
  }
  SortRuns(ws.get());
  return ws;
}

}  // namespace numprobe::ui
