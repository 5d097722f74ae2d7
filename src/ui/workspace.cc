#include "ui/workspace.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "numprobe/compare.h"
#include "numprobe/compare_trees.h"
#include "numprobe/divergence.h"
#include "numprobe/dump.h"
#include "numprobe/dump_layout.h"
#include "numprobe/scan.h"

#include "compare/compare_internal.h"
#include "compare/compare_json.h"
#include "compare/divergence_file.h"
#include "core/json.h"
#include "core/py_format.h"
#include "core/utf8.h"
#include "msprobe/entry_name.h"
#include "msprobe/folder_number.h"

namespace numprobe::ui {

namespace {

namespace fs = std::filesystem;

constexpr uintmax_t kMaxDivergenceBytes = uintmax_t{16} << 20;
constexpr uintmax_t kMaxScanBytes = uintmax_t{512} << 20;
constexpr int kMaxWalkDepth = 4;

struct FileCloser {
  void operator()(std::FILE* f) const {
    if (f != nullptr) std::fclose(f);
  }
};

// Builds a run's store from a compare JSON twin as compare's reader streams it.
class TwinTable final : public CompareJsonTable {
 public:
  Status Columns(const std::vector<std::string>& columns) override {
    columns_ = columns;
    name_column_ = 0;
    for (size_t i = 0; i < columns.size(); ++i) {
      if (columns[i] == "NPU Name") {
        name_column_ = i;
        break;
      }
    }
    builder_ = std::make_unique<ResultStoreBuilder>(columns_);
    return Status::Ok();
  }
  Status Row(std::span<const CompareJsonCell> cells) override {
    cells_.clear();
    for (const CompareJsonCell& c : cells) {
      cells_.push_back(c.is_number ? Cell::Number(c.number) : Cell::Text(c.text));
    }
    const Cell& name = cells_[name_column_];
    return builder_->AddRow(cells_,
                            detail::EntryOfRow(name.is_number ? std::string_view() : name.text));
  }
  std::unique_ptr<ResultStore> Finish() { return builder_ ? builder_->Finish() : nullptr; }

 private:
  std::vector<std::string> columns_;
  size_t name_column_ = 0;
  std::vector<Cell> cells_;
  std::unique_ptr<ResultStoreBuilder> builder_;
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

// N of rank{N}, the step of a scope; -1 when there is none.
int64_t RankOf(std::string_view rank_folder) {
  return detail::FolderNumber(rank_folder, "rank").value_or(-1);
}
int64_t StepOfScope(std::string_view scope) { return detail::ScopeStep(scope).value_or(-1); }

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

// As above, with construct.json read. A construct.json that cannot be read is an error, as it is
// for compare and scan.
Status FinishRun(Run* run, const fs::path& construct_json) {
  std::optional<ConstructMap> construct;
  if (!construct_json.empty()) {
    std::error_code ec;
    if (fs::is_regular_file(construct_json, ec)) {
      NUMPROBE_ASSIGN_OR_RETURN(construct, ReadConstructJson(construct_json));
    }
  }
  FinishRun(run, construct ? &*construct : nullptr);
  return Status::Ok();
}

// Applies the analysis that divergence_{ts}.json records for (scope, rank) to `run`, if any.
void ApplyDivergenceFile(const DivergenceFile& file, const std::string& scope,
                         const std::string& rank, Run* run) {
  for (const DivergenceFileRank& r : file.ranks) {
    if (r.scope != scope || r.rank != rank) continue;
    ApplyAnalysis(*run->store, r.report, &run->findings);
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
  auto doc = ParseScanJson(text);
  if (!doc) return doc.error().WithContext(path.string());
  ScanData scan;
  scan.file = path.string();
  scan.doc = std::move(*doc);
  ws->scan = std::move(scan);
  return Status::Ok();
}

Status LoadPrecheck(const fs::path& path, Workspace* ws) {
  NUMPROBE_ASSIGN_OR_RETURN(std::string text, ReadSmallFile(path, kMaxScanBytes));
  auto doc = ParseJson(text, kPythonJson);
  if (!doc) return doc.error().WithContext(path.string());
  if (!doc->is_object()) {
    return Status::Corrupt(fmt::format("{}: the root is not an object", path.string()));
  }
  if (doc->Find("numprobe_precheck") == nullptr) {
    return Status::Corrupt(fmt::format(
        "{}: not a numprobe precheck result (no \"numprobe_precheck\")", path.string()));
  }
  ScanData precheck;
  precheck.file = path.string();
  precheck.doc = std::move(*doc);
  ws->precheck = std::move(precheck);
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
      texts.emplace_back(row.name);
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
      texts.push_back(
          detail::PyStrListRepr({std::string(row.data_name.empty() ? "-1" : row.data_name)}));
      NUMPROBE_RETURN_IF_ERROR(AddTextRow(&builder, texts, entry.name));
    }
  }
  auto run = std::make_unique<Run>();
  run->scope = scope;
  run->rank_folder = rank;
  run->label = JoinLabel(scope, rank).empty() ? "dump.json" : JoinLabel(scope, rank);
  run->step = StepOfScope(scope);
  run->rank = RankOf(rank);
  run->mode = "dump";
  run->source = loc.dump_json.string();
  run->target = loc.dump_json.string();
  run->target_tensors = TensorDirIn(loc.dir);
  run->store = builder.Finish();
  NUMPROBE_RETURN_IF_ERROR(FinishRun(run.get(), loc.construct_json));
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
  run->rank = RankOf(pair.rank);
  run->mode = std::string(EnumName(table.mode));
  run->source = "compared on the fly";
  run->target = pair.target->dump_json.string();
  run->golden = pair.golden->dump_json.string();
  run->target_tensors = TensorDirIn(pair.target->dir);
  run->golden_tensors = TensorDirIn(pair.golden->dir);
  run->store = builder.Finish();
  FinishRun(run.get(), rank.has_construct ? &rank.construct : nullptr);
  ApplyAnalysis(*run->store, rank.report, &run->findings);
  for (const std::string& w : table.warnings) ws->warnings.push_back(run->label + ": " + w);
  ws->runs.push_back(std::move(run));
  return Status::Ok();
}

Status AddTwinRun(const fs::path& file, const std::string& scope, const std::string& rank,
                  const DivergenceFile* divergence, Workspace* ws) {
  NUMPROBE_ASSIGN_OR_RETURN(LoadedTable table, ReadCompareJson(file));
  auto run = std::make_unique<Run>();
  run->scope = scope;
  run->rank_folder = rank;
  run->label = JoinLabel(scope, rank).empty() ? file.filename().string() : JoinLabel(scope, rank);
  run->step = StepOfScope(scope);
  run->rank = RankOf(rank);
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
  NUMPROBE_RETURN_IF_ERROR(
      FinishRun(run.get(), target_dir.empty() ? fs::path() : target_dir / "construct.json"));
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
  std::vector<fs::path> prechecks;
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
    if (IsPrecheckTwin(name)) found->prechecks.push_back(e.path());
  }
  for (auto* list : {&found->twins, &found->divergences, &found->scans, &found->prechecks}) {
    std::sort(list->begin(), list->end());
  }
}

// divergence_{ts}.json of `ts` among `files`, parsed; null when absent, or unreadable or
// malformed (noted: the results are shown without it). Nesting too deep to read is an error.
Result<std::unique_ptr<DivergenceFile>> ReadDivergence(const std::vector<fs::path>& files,
                                                       const std::string& ts, Workspace* ws) {
  for (const fs::path& f : files) {
    if (f.filename() != "divergence_" + ts + ".json") continue;
    auto text = ReadSmallFile(f, kMaxScanBytes);
    if (!text) {
      ws->warnings.push_back(text.error().message());
      return std::unique_ptr<DivergenceFile>();
    }
    auto parsed = ParseDivergenceJson(*text);
    if (!parsed) {
      if (parsed.error().code() == ErrorCode::kOutOfRange) {
        return parsed.error().WithContext(f.string());
      }
      ws->warnings.push_back(
          fmt::format("{}: malformed JSON; its analysis is not shown", f.string()));
      return std::unique_ptr<DivergenceFile>();
    }
    return std::make_unique<DivergenceFile>(std::move(*parsed));
  }
  return std::unique_ptr<DivergenceFile>();
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
  std::map<std::string, std::unique_ptr<DivergenceFile>> analyses;  // by timestamp
  for (const auto& [key, value] : newest) {
    auto& doc = analyses[value.first];
    if (!doc) {
      NUMPROBE_ASSIGN_OR_RETURN(doc, ReadDivergence(divergences, value.first, ws));
    }
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
  TwinTable table;
  NUMPROBE_ASSIGN_OR_RETURN(CompareJsonInfo info, numprobe::ReadCompareJson(path, table));
  LoadedTable t;
  t.store = table.Finish();
  t.mode = std::move(info.mode);
  t.target = std::move(info.target);
  t.golden = std::move(info.golden);
  return t;
}

bool IsPrecheckTwin(std::string_view name) {
  constexpr std::string_view kPrefix = "precheck_";
  constexpr std::string_view kSuffix = ".json";
  if (!name.starts_with(kPrefix) || !name.ends_with(kSuffix)) return false;
  const std::string_view ts =
      name.substr(kPrefix.size(), name.size() - kPrefix.size() - kSuffix.size());
  return ts.size() == 14 &&
         std::all_of(ts.begin(), ts.end(), [](char c) { return c >= '0' && c <= '9'; });
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
          if (cp > detail::kMaxCodePoint) return std::nullopt;
          detail::AppendUtf8(cp, &item);
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
    if (IsPrecheckTwin(name)) {
      ws->kind = "precheck";
      NUMPROBE_RETURN_IF_ERROR(LoadPrecheck(path, ws.get()));
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
    std::unique_ptr<DivergenceFile> analysis;
    std::string scope;
    fs::path dir = path.parent_path();
    for (int up = 0; up < kMaxWalkDepth && !ts.empty() && !analysis; ++up) {
      std::vector<fs::path> candidate = {dir / ("divergence_" + ts + ".json")};
      if (fs::is_regular_file(candidate[0], ec)) {
        NUMPROBE_ASSIGN_OR_RETURN(analysis, ReadDivergence(candidate, ts, ws.get()));
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
  if (!found.prechecks.empty()) {
    NUMPROBE_RETURN_IF_ERROR(LoadPrecheck(found.prechecks.back(), ws.get()));
  }
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
    const JsonValue* dump = ws->scan->doc.Find("dump");
    if (dump != nullptr && dump->is_string()) {
      const fs::path dump_path(dump->string_value());
      if (fs::exists(dump_path, ec)) {
        Status s = LoadDumpTree(dump_path, ws.get());
        if (!s.ok()) ws->warnings.push_back(s.message());
      }
    }
    SortRuns(ws.get());
    return ws;
  }
  if (ws->precheck) {  // a precheck output folder (perhaps beside the dump it checked)
    ws->kind = "precheck";
    if (Status s = LoadDumpTree(path, ws.get()); !s.ok() && s.code() != ErrorCode::kNotFound) {
      ws->warnings.push_back(s.message());
    }
    SortRuns(ws.get());
    return ws;
  }
  ws->kind = "dump";
  Status s = LoadDumpTree(path, ws.get());
  if (!s.ok()) {
    if (s.code() == ErrorCode::kNotFound) {
      return Status::NotFound(fmt::format(
          "{}: holds no compare results (compare_result_*.json), scan output (scan_*.json), "
          "precheck output (precheck_*.json) or dump (dump.json)",
          path.string()));
    }
    return s;
  }
  SortRuns(ws.get());
  return ws;
}

}  // namespace numprobe::ui
