#include "ui/api.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>

#include <fmt/format.h>
#include <rapidjson/stringbuffer.h>

#include "core/json_writer.h"
#include "ui/tensor_detail.h"

namespace numprobe::ui {

namespace {

constexpr uint64_t kMaxPage = 1000;
constexpr size_t kTensorCacheEntries = 32;
constexpr size_t kMaxSearchHits = 200;
constexpr size_t kMaxHeatmapOps = 400;
constexpr std::string_view kStackColumn = "NPU_Stack_Info";

using JsonWriter = numprobe::JsonWriter<rapidjson::StringBuffer>;

class Body {
 public:
  Body() : w(buffer_, JsonFileKind::kUi) {}
  std::string Take() { return {buffer_.GetString(), buffer_.GetSize()}; }
  rapidjson::StringBuffer buffer_;
  JsonWriter w;
};

ApiResponse Error(int status, std::string_view message) {
  Body b;
  b.w.StartObject();
  b.w.Key("error");
  b.w.String(message);
  b.w.EndObject();
  return {status, b.Take()};
}

ApiResponse Ok(Body& b) { return {200, b.Take()}; }

const std::string* Get(const Params& params, const std::string& key) {
  const auto it = params.find(key);
  return it == params.end() ? nullptr : &it->second;
}

Result<uint64_t> GetUint(const Params& params, const std::string& key, uint64_t fallback,
                         uint64_t max) {
  const std::string* v = Get(params, key);
  if (v == nullptr || v->empty()) return fallback;
  uint64_t out = 0;
  const auto [end, ec] = std::from_chars(v->data(), v->data() + v->size(), out);
  if (ec != std::errc() || end != v->data() + v->size()) {
    return Status::InvalidArgument(fmt::format("{} must be a non-negative integer", key));
  }
  if (out > max) return Status::InvalidArgument(fmt::format("{} must be at most {}", key, max));
  return out;
}

Result<std::optional<double>> ParseBound(std::string_view text) {
  if (text.empty()) return std::optional<double>();
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || std::isnan(v)) {
    return Status::InvalidArgument(fmt::format("'{}' is not a number", text.substr(0, 40)));
  }
  return std::optional<double>(v);
}

void WriteCell(JsonWriter& w, const Cell& c) {
  if (c.is_number) {
    w.Double(c.number);
  } else {
    w.String(c.text);
  }
}

void WriteLevelCounts(JsonWriter& w, const ResultStore& s) {
  w.StartObject();
  for (const Verdict l :
       {Verdict::kPass, Verdict::kWarning, Verdict::kError, Verdict::kUnmatched, Verdict::kNone}) {
    w.Key(EnumName(l));
    w.Int64(s.LevelCount(l));
  }
  w.EndObject();
}

std::vector<std::string> StackOf(const Run& run, uint32_t entry) {
  const ResultStore& s = *run.store;
  const int col = s.ColumnIndex(kStackColumn);
  if (col < 0) return {};
  for (const uint32_t row : s.entry_rows(entry)) {
    const Cell c = s.Get(row, col);
    if (c.is_number || c.text.empty() || c.text == "N/A") continue;
    auto lines = ParsePyStrList(c.text);
    if (lines) return *lines;
    return {std::string(c.text)};
  }
  return {};
}

std::vector<std::string> DataNames(const Run& run, uint32_t row) {
  const ResultStore& s = *run.store;
  const int col = s.ColumnIndex("Data_name");
  if (col < 0) return {};
  const Cell c = s.Get(row, col);
  if (c.is_number) return {};
  auto names = ParsePyStrList(c.text);
  if (!names) return {};
  for (std::string& n : *names) {
    if (n == "-1" || n == "N/A") n.clear();
  }
  return *names;
}

void WriteCulprit(JsonWriter& w, const Run& run, const Culprit& c) {
  const ResultStore& s = *run.store;
  const std::string& op = s.entry_names()[c.entry];
  w.StartObject();
  w.Key("op");
  w.String(op);
  w.Key("level");
  w.String(EnumName(c.level));
  w.Key("why");
  w.String(c.why);
  w.Key("first_row");
  w.Uint(s.entry_first_row(c.entry));
  w.Key("rows");
  w.StartArray();
  for (const uint32_t r : c.rows) {
    w.StartObject();
    w.Key("i");
    w.Uint(r);
    w.Key("name");
    WriteCell(w, s.Get(r, s.name_column()));
    w.EndObject();
  }
  w.EndArray();
  // The analysis' module path and stack when it named the op (they come from the dump itself);
  // otherwise the tree's nesting and the stack column.
  const DivergenceOp* a = c.analysis ? &*c.analysis : nullptr;
  w.Key("module_path");
  w.StartArray();
  if (a != nullptr && !a->module_path.empty()) {
    for (const std::string& m : a->module_path) w.String(m);
  } else if (auto node = run.tree.Find(op)) {
    for (const std::string& m : run.tree.ModulePath(*node)) w.String(m);
  }
  w.EndArray();
  w.Key("stack");
  w.StartArray();
  if (a != nullptr && !a->stack.empty()) {
    for (const std::string& line : a->stack) w.String(line);
  } else {
    for (const std::string& line : StackOf(run, c.entry)) w.String(line);
  }
  w.EndArray();
  w.Key("analysis");
  if (a != nullptr) {
    w.StartObject();
    w.Key("input_error");
    w.Double(a->input_error);
    w.Key("output_error");
    w.Double(a->output_error);
    w.Key("tolerance");
    w.Double(a->tolerance);
    w.Key("growth");
    w.Double(a->growth);
    w.Key("worst_output");
    w.String(a->worst_output);
    w.Key("dtypes");
    w.String(a->dtype_pair);
    w.Key("non_finite");
    w.Bool(a->non_finite);
    w.Key("rule");
    w.String(a->rule);
    w.Key("at");
    w.String(a->at);
    w.Key("cast");
    if (a->cast.has_value()) {
      w.StartObject();
      w.Key("name");
      w.String(a->cast->name);
      w.Key("from");
      w.String(a->cast->from_dtype);
      w.Key("to");
      w.String(a->cast->to_dtype);
      w.Key("at");
      w.String(a->cast->at);
      w.EndObject();
    } else {
      w.Null();
    }
    w.EndObject();
  } else {
    w.Null();
  }
  w.EndObject();
}

// Series of runs that differ only by step: the scope with its step folders blanked, and the rank.
std::string SeriesKey(const Run& run) {
  std::string key;
  for (const auto& part : std::filesystem::path(run.scope)) {
    const std::string p = part.string();
    key += (p.starts_with("step") ? std::string("step*") : p) + "/";
  }
  return key + "|" + run.rank_folder;
}

bool LowerIsWorse(std::string_view column) { return column == "Cosine"; }

void WriteTreeNodeSummary(JsonWriter& w, const ModelTree& tree, uint32_t id) {
  const TreeNode& n = tree.node(id);
  w.StartObject();
  w.Key("name");
  w.String(n.name);
  w.Key("worst");
  w.String(EnumName(n.worst));
  w.Key("rows");
  w.Uint(n.rows);
  w.Key("children");
  w.Uint(static_cast<unsigned>(n.children.size()));
  w.Key("entry");
  w.Bool(n.entry >= 0);
  w.EndObject();
}

}  // namespace

Api::Api(std::shared_ptr<const Workspace> workspace) : workspace_(std::move(workspace)) {}

std::string Api::InfoJson() const {
  const Workspace& ws = *workspace_;
  Body b;
  JsonWriter& w = b.w;
  w.StartObject();
  w.Key("numprobe_ui");
  w.Int(1);
  w.Key("kind");
  w.String(ws.kind);
  w.Key("paths");
  w.StartArray();
  for (const std::string& p : ws.paths) w.String(p);
  w.EndArray();
  w.Key("warnings");
  w.StartArray();
  for (const std::string& m : ws.warnings) w.String(m);
  w.EndArray();
  std::set<std::string> scopes;
  std::set<std::string> series;
  w.Key("runs");
  w.StartArray();
  for (size_t i = 0; i < ws.runs.size(); ++i) {
    const Run& run = *ws.runs[i];
    const ResultStore& s = *run.store;
    scopes.insert(run.scope);
    series.insert(SeriesKey(run));
    w.StartObject();
    w.Key("id");
    w.Uint(static_cast<unsigned>(i));
    w.Key("label");
    w.String(run.label);
    w.Key("scope");
    w.String(run.scope);
    w.Key("rank_folder");
    w.String(run.rank_folder);
    w.Key("step");
    w.Int64(run.step);
    w.Key("rank");
    w.Int64(run.rank);
    w.Key("mode");
    w.String(run.mode);
    w.Key("source");
    w.String(run.source);
    w.Key("target");
    w.String(run.target);
    w.Key("golden");
    w.String(run.golden);
    w.Key("rows");
    w.Uint(s.row_count());
    w.Key("ops");
    w.Uint(static_cast<unsigned>(s.entry_names().size()));
    w.Key("counts");
    WriteLevelCounts(w, s);
    w.Key("columns");
    w.StartArray();
    for (const auto& c : s.columns()) w.String(c.name);
    w.EndArray();
    w.Key("page_columns");
    w.StartArray();
    for (size_t c = 0; c < s.columns().size(); ++c) {
      if (s.columns()[c].name != kStackColumn) w.Uint(static_cast<unsigned>(c));
    }
    w.EndArray();
    w.Key("numeric_columns");
    w.StartArray();
    for (const auto& c : s.columns()) {
      if (!c.numbers.empty()) w.String(c.name);
    }
    w.EndArray();
    w.Key("has_tensors");
    w.Bool(!run.target_tensors.empty() || !run.golden_tensors.empty());
    w.Key("has_construct");
    w.Bool(run.has_construct);
    w.Key("divergence");
    w.StartArray();
    for (const Culprit& c : run.findings.divergence) WriteCulprit(w, run, c);
    w.EndArray();
    w.Key("divergence_source");
    w.String(run.findings.divergence_source);
    w.Key("divergence_fallback");
    w.Bool(run.findings.divergence_fallback);
    w.Key("first_over_tolerance");
    w.String(run.findings.first_over_tolerance);
    w.Key("first_anomaly");
    if (run.findings.first_anomaly) {
      WriteCulprit(w, run, *run.findings.first_anomaly);
    } else {
      w.Null();
    }
    w.EndObject();
  }
  w.EndArray();
  w.Key("multi_rank");
  w.Bool(ws.runs.size() > scopes.size());
  w.Key("multi_step");
  w.Bool(ws.runs.size() > series.size());
  w.Key("scan");
  if (ws.scan) {
    w.StartObject();
    w.Key("file");
    w.String(ws.scan->file);
    w.EndObject();
  } else {
    w.Null();
  }
  w.Key("precheck");
  if (ws.precheck) {
    w.StartObject();
    w.Key("file");
    w.String(ws.precheck->file);
    w.EndObject();
  } else {
    w.Null();
  }
  w.Key("divergence_file");
  if (!ws.divergence_file.empty()) {
    w.StartObject();
    w.Key("file");
    w.String(ws.divergence_file);
    w.Key("text");
    w.String(ws.divergence_json);
    w.EndObject();
  } else {
    w.Null();
  }
  w.EndObject();
  return b.Take();
}

ApiResponse Api::Handle(std::string_view path, const Params& params) const {
  if (path == "/api/info") return {200, InfoJson()};
  if (path == "/api/rows") return Rows(params);
  if (path == "/api/row") return Row(params);
  if (path == "/api/tree") return Tree(params);
  if (path == "/api/tree/search") return TreeSearch(params);
  if (path == "/api/tensor") return Tensor(params);
  if (path == "/api/trend") return Trend(params);
  if (path == "/api/heatmap") return Heatmap(params);
  if (path == "/api/scan") return Scan();
  if (path == "/api/scan/headroom") return ScanHeadroom(params);
  if (path == "/api/precheck") return Precheck();
  return Error(404, "no such API");
}

namespace {

Result<const Run*> RunOf(const Workspace& ws, const Params& params) {
  if (ws.runs.empty()) return Status::InvalidArgument("there are no compare runs");
  NUMPROBE_ASSIGN_OR_RETURN(const uint64_t id, GetUint(params, "run", 0, ws.runs.size() - 1));
  return ws.runs[id].get();
}

Result<RowQuery> QueryOf(const Run& run, const Params& params) {
  const ResultStore& s = *run.store;
  RowQuery q;
  if (const std::string* r = Get(params, "result"); r != nullptr && !r->empty()) {
    size_t start = 0;
    while (start <= r->size()) {
      const size_t comma = std::min(r->find(',', start), r->size());
      const std::string_view name = std::string_view{*r}.substr(start, comma - start);
      const std::optional<Verdict> l = EnumFromName<Verdict>(name);
      if (!l) {
        return Status::InvalidArgument(fmt::format("unknown result '{}'", name.substr(0, 40)));
      }
      q.levels.push_back(*l);
      start = comma + 1;
    }
  }
  if (const std::string* p = Get(params, "q"); p != nullptr) {
    if (p->size() > 1000) return Status::InvalidArgument("q is longer than 1000 characters");
    q.pattern = *p;
  }
  const auto [lo, hi] = params.equal_range("range");
  for (auto it = lo; it != hi; ++it) {
    // COLUMN:MIN:MAX, either bound may be empty. Column names hold no ':'.
    const std::string& v = it->second;
    const size_t a = v.find(':');
    const size_t b = a == std::string::npos ? std::string::npos : v.find(':', a + 1);
    if (b == std::string::npos) return Status::InvalidArgument("range must be COLUMN:MIN:MAX");
    RowQuery::Range range;
    range.column = s.ColumnIndex(std::string_view{v}.substr(0, a));
    if (range.column < 0) {
      return Status::InvalidArgument(
          fmt::format("unknown column '{}'", v.substr(0, std::min<size_t>(a, 80))));
    }
    NUMPROBE_ASSIGN_OR_RETURN(range.min, ParseBound(std::string_view(v).substr(a + 1, b - a - 1)));
    NUMPROBE_ASSIGN_OR_RETURN(range.max, ParseBound(std::string_view(v).substr(b + 1)));
    q.ranges.push_back(range);
  }
  if (const std::string* n = Get(params, "node"); n != nullptr && !n->empty()) {
    const auto id = run.tree.Find(*n);
    if (!id)
      return Status::InvalidArgument(fmt::format("unknown tree node '{}'", n->substr(0, 200)));
    const TreeNode& node = run.tree.node(*id);
    q.node_span = std::make_pair(node.position, node.end);
  }
  if (const std::string* op = Get(params, "op"); op != nullptr && !op->empty()) {
    const auto& names = s.entry_names();
    const auto it = std::find(names.begin(), names.end(), *op);
    if (it == names.end())
      return Status::InvalidArgument(fmt::format("unknown op '{}'", op->substr(0, 200)));
    q.entry = static_cast<uint32_t>(it - names.begin());
  }
  if (const std::string* sort = Get(params, "sort"); sort != nullptr && !sort->empty()) {
    q.sort_column = s.ColumnIndex(*sort);
    if (q.sort_column < 0) {
      return Status::InvalidArgument(fmt::format("unknown column '{}'", sort->substr(0, 80)));
    }
  }
  if (const std::string* d = Get(params, "desc"); d != nullptr) q.descending = *d == "1";
  return q;
}

}  // namespace

ApiResponse Api::Rows(const Params& params) const {
  auto run = RunOf(*workspace_, params);
  if (!run) return Error(400, run.error().message());
  auto query = QueryOf(**run, params);
  if (!query) return Error(400, query.error().message());
  auto offset = GetUint(params, "offset", 0, std::numeric_limits<uint32_t>::max());
  if (!offset) return Error(400, offset.error().message());
  auto limit = GetUint(params, "limit", 100, kMaxPage);
  if (!limit) return Error(400, limit.error().message());
  const ResultStore& s = *(*run)->store;
  const ResultStore::Page page = s.Query(*query, *offset, *limit);
  std::vector<size_t> columns;
  for (size_t c = 0; c < s.columns().size(); ++c) {
    if (s.columns()[c].name != kStackColumn) columns.push_back(c);
  }
  Body b;
  JsonWriter& w = b.w;
  w.StartObject();
  w.Key("total");
  w.Uint64(page.total);
  w.Key("offset");
  w.Uint64(*offset);
  // Gather the page column by column first: in a sorted or filtered order the rows are scattered,
  // and independent loads down one column overlap their cache misses, where cell-by-cell
  // formatting would wait for each in turn.
  const size_t n = page.rows.size();
  std::vector<Cell> cells(n * columns.size());
  for (size_t k = 0; k < columns.size(); ++k) {
    for (size_t j = 0; j < n; ++j)
      cells[j * columns.size() + k] = s.Get(page.rows[j], static_cast<int>(columns[k]));
  }
  w.Key("rows");
  w.StartArray();
  for (size_t j = 0; j < n; ++j) {
    const uint32_t r = page.rows[j];
    w.StartObject();
    w.Key("i");
    w.Uint(r);
    w.Key("l");
    w.String(EnumName(s.level(r)));
    w.Key("c");
    w.StartArray();
    for (size_t k = 0; k < columns.size(); ++k) WriteCell(w, cells[j * columns.size() + k]);
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return Ok(b);
}

ApiResponse Api::Row(const Params& params) const {
  auto run = RunOf(*workspace_, params);
  if (!run) return Error(400, run.error().message());
  const Run& r = **run;
  const ResultStore& s = *r.store;
  if (s.row_count() == 0) return Error(400, "the run has no rows");
  auto row = GetUint(params, "row", 0, s.row_count() - 1);
  if (!row) return Error(400, row.error().message());
  const auto i = static_cast<uint32_t>(*row);
  const uint32_t entry = s.entry(i);
  Body b;
  JsonWriter& w = b.w;
  w.StartObject();
  w.Key("i");
  w.Uint(i);
  w.Key("level");
  w.String(EnumName(s.level(i)));
  w.Key("op");
  w.String(s.entry_names()[entry]);
  w.Key("cells");
  w.StartArray();
  for (size_t c = 0; c < s.columns().size(); ++c) {
    if (s.columns()[c].name == kStackColumn) continue;
    w.StartArray();
    w.String(s.columns()[c].name);
    WriteCell(w, s.Get(i, static_cast<int>(c)));
    w.EndArray();
  }
  w.EndArray();
  w.Key("module_path");
  w.StartArray();
  if (auto node = r.tree.Find(s.entry_names()[entry])) {
    for (const std::string& m : r.tree.ModulePath(*node)) w.String(m);
  }
  w.EndArray();
  w.Key("stack");
  w.StartArray();
  for (const std::string& line : StackOf(r, entry)) w.String(line);
  w.EndArray();
  const std::vector<std::string> names = DataNames(r, i);
  w.Key("tensor");
  w.Bool(!names.empty() && !names[0].empty() && !r.target_tensors.empty());
  w.EndObject();
  return Ok(b);
}

ApiResponse Api::Tree(const Params& params) const {
  auto run = RunOf(*workspace_, params);
  if (!run) return Error(400, run.error().message());
  const ModelTree& tree = (*run)->tree;
  const std::string* name = Get(params, "node");
  const auto id = tree.Find(name != nullptr ? *name : "");
  if (!id) return Error(400, "unknown tree node");
  auto offset = GetUint(params, "offset", 0, std::numeric_limits<uint32_t>::max());
  if (!offset) return Error(400, offset.error().message());
  auto limit = GetUint(params, "limit", 500, 5000);
  if (!limit) return Error(400, limit.error().message());
  const TreeNode& node = tree.node(*id);
  Body b;
  JsonWriter& w = b.w;
  w.StartObject();
  w.Key("nested");
  w.Bool(tree.nested());
  w.Key("node");
  WriteTreeNodeSummary(w, tree, *id);
  w.Key("path");
  w.StartArray();
  for (const uint32_t p : tree.PathTo(*id)) w.String(tree.node(p).name);
  w.EndArray();
  w.Key("total");
  w.Uint(static_cast<unsigned>(node.children.size()));
  w.Key("children");
  w.StartArray();
  for (uint64_t k = *offset; k < node.children.size() && k < *offset + *limit; ++k) {
    WriteTreeNodeSummary(w, tree, node.children[k]);
  }
  w.EndArray();
  w.EndObject();
  return Ok(b);
}

ApiResponse Api::TreeSearch(const Params& params) const {
  auto run = RunOf(*workspace_, params);
  if (!run) return Error(400, run.error().message());
  const ModelTree& tree = (*run)->tree;
  const std::string* q = Get(params, "q");
  if (q == nullptr || q->empty()) return Error(400, "q is required");
  if (q->size() > 1000) return Error(400, "q is longer than 1000 characters");
  auto limit = GetUint(params, "limit", 50, kMaxSearchHits);
  if (!limit) return Error(400, limit.error().message());
  const std::vector<uint32_t> hits = tree.Search(*q, *limit + 1);
  Body b;
  JsonWriter& w = b.w;
  w.StartObject();
  w.Key("truncated");
  w.Bool(hits.size() > *limit);
  w.Key("hits");
  w.StartArray();
  for (size_t k = 0; k < hits.size() && k < *limit; ++k) {
    const TreeNode& n = tree.node(hits[k]);
    w.StartObject();
    w.Key("name");
    w.String(n.name);
    w.Key("worst");
    w.String(EnumName(n.worst));
    w.Key("rows");
    w.Uint(n.rows);
    w.Key("path");
    w.StartArray();
    for (const uint32_t p : tree.PathTo(hits[k])) w.String(tree.node(p).name);
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return Ok(b);
}

std::string Api::TreeJson(size_t run_index) const {
  const ModelTree& tree = workspace_->runs[run_index]->tree;
  Body b;
  JsonWriter& w = b.w;
  w.StartObject();
  w.Key("nested");
  w.Bool(tree.nested());
  w.Key("nodes");
  w.StartArray();
  for (uint32_t i = 0; i < tree.size(); ++i) {
    const TreeNode& n = tree.node(i);
    w.StartArray();
    w.String(n.name);
    w.Int(n.parent);
    w.String(EnumName(n.worst));
    w.Uint(n.rows);
    w.Int(n.entry);
    w.Uint(n.position);
    w.Uint(n.end);
    w.StartArray();
    for (const uint32_t c : n.children) w.Uint(c);
    w.EndArray();
    w.EndArray();
  }
  w.EndArray();
  w.EndObject();
  return b.Take();
}

ApiResponse Api::TensorJson(size_t run_index, uint32_t row, int64_t slice) const {
  const std::string key = fmt::format("{}:{}:{}", run_index, row, slice);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = tensor_cache_.begin(); it != tensor_cache_.end(); ++it) {
      if (it->first == key) {
        tensor_cache_.splice(tensor_cache_.begin(), tensor_cache_, it);
        return {200, *tensor_cache_.front().second};
      }
    }
  }
  const Run& r = *workspace_->runs[run_index];
  std::vector<std::string> names = DataNames(r, row);
  names.resize(2);
  if (names[0].empty() && names[1].empty()) {
    return Error(404, "this row has no tensor files (a statistics dump, or not a tensor)");
  }
  TensorDetailOptions options;
  options.slice = slice;
  auto detail =
      ComputeTensorDetail(r.target_tensors, names[0], r.golden_tensors, names[1], options);
  if (!detail) return Error(400, detail.error().message());
  const TensorDetail& d = *detail;
  Body b;
  JsonWriter& w = b.w;
  auto side = [&w](const char* name, const TensorSide& s) {
    w.Key(name);
    w.StartObject();
    w.Key("present");
    w.Bool(s.present);
    w.Key("file");
    w.String(s.file);
    w.Key("error");
    w.String(s.error);
    w.Key("dtype");
    w.String(s.dtype);
    w.Key("shape");
    w.StartArray();
    for (const int64_t x : s.shape) w.Int64(x);
    w.EndArray();
    const TensorStats& st = s.stats;
    w.Key("stats");
    w.StartObject();
    w.Key("count");
    w.Int64(st.count);
    w.Key("max");
    w.Double(st.has_minmax ? st.max : std::nan(""));
    w.Key("min");
    w.Double(st.has_minmax ? st.min : std::nan(""));
    w.Key("mean");
    w.Double(st.has_mean_norm ? st.mean : std::nan(""));
    w.Key("norm");
    w.Double(st.has_mean_norm ? st.norm : std::nan(""));
    w.Key("nan");
    w.Int64(st.nan_count);
    w.Key("pos_inf");
    w.Int64(st.pos_inf_count);
    w.Key("neg_inf");
    w.Int64(st.neg_inf_count);
    w.Key("zero");
    w.Int64(st.zero_count);
    w.Key("max_abs");
    w.Double(st.max_abs);
    w.Key("min_nonzero_abs");
    w.Double(st.min_nonzero_abs);
    w.EndObject();
    w.Key("histogram");
    w.StartArray();
    for (const int64_t c : s.histogram) w.Int64(c);
    w.EndArray();
    w.EndObject();
  };
  w.StartObject();
  w.Key("run");
  w.Uint(static_cast<unsigned>(run_index));
  w.Key("row");
  w.Uint(row);
  side("target", d.target);
  side("golden", d.golden);
  w.Key("edges");
  w.StartArray();
  for (const double e : d.edges) w.Double(e);
  w.EndArray();
  w.Key("paired");
  w.Bool(d.paired);
  w.Key("nan_mismatch");
  w.Int64(d.nan_mismatch);
  w.Key("inf_mismatch");
  w.Int64(d.inf_mismatch);
  w.Key("max_abs_err");
  w.Double(d.max_abs_err);
  w.Key("mean_abs_err");
  w.Double(d.mean_abs_err);
  w.Key("heatmap");
  w.StartObject();
  w.Key("slice");
  w.Int64(d.slice);
  w.Key("slices");
  w.Int64(d.slices);
  w.Key("plane");
  w.StartArray();
  w.Int64(d.plane_rows);
  w.Int64(d.plane_cols);
  w.EndArray();
  w.Key("cell");
  w.StartArray();
  w.Int64(d.cell_rows);
  w.Int64(d.cell_cols);
  w.EndArray();
  w.Key("rows");
  w.Int64(d.rows);
  w.Key("cols");
  w.Int64(d.cols);
  w.Key("values");
  w.StartArray();
  for (const double v : d.heat) w.Double(v);
  w.EndArray();
  w.EndObject();
  w.Key("worst");
  w.StartArray();
  for (const WorstElement& e : d.worst) {
    w.StartObject();
    w.Key("index");
    w.StartArray();
    for (const int64_t x : e.index) w.Int64(x);
    w.EndArray();
    w.Key("target");
    w.Double(e.target);
    w.Key("golden");
    w.Double(e.golden);
    w.Key("abs_err");
    w.Double(e.abs_err);
    w.Key("rel_err");
    w.Double(e.rel_err);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  auto body = std::make_shared<const std::string>(b.Take());
  std::lock_guard<std::mutex> lock(mutex_);
  tensor_cache_.emplace_front(key, body);
  if (tensor_cache_.size() > kTensorCacheEntries) tensor_cache_.pop_back();
  return {200, *body};
}

ApiResponse Api::Tensor(const Params& params) const {
  auto run = RunOf(*workspace_, params);
  if (!run) return Error(400, run.error().message());
  const ResultStore& s = *(*run)->store;
  if (s.row_count() == 0) return Error(400, "the run has no rows");
  auto row = GetUint(params, "row", 0, s.row_count() - 1);
  if (!row) return Error(400, row.error().message());
  auto slice = GetUint(params, "slice", 0, uint64_t{1} << 40);
  if (!slice) return Error(400, slice.error().message());
  const auto run_index = GetUint(params, "run", 0, workspace_->runs.size() - 1);
  return TensorJson(*run_index, static_cast<uint32_t>(*row), static_cast<int64_t>(*slice));
}

ApiResponse Api::Trend(const Params& params) const {
  auto run = RunOf(*workspace_, params);
  if (!run) return Error(400, run.error().message());
  const std::string* name = Get(params, "name");
  const std::string* column = Get(params, "column");
  if (name == nullptr || name->empty() || column == nullptr || column->empty()) {
    return Error(400, "name and column are required");
  }
  const std::string series = SeriesKey(**run);
  Body b;
  JsonWriter& w = b.w;
  w.StartObject();
  w.Key("name");
  w.String(*name);
  w.Key("column");
  w.String(*column);
  w.Key("points");
  w.StartArray();
  for (size_t i = 0; i < workspace_->runs.size(); ++i) {
    const Run& r = *workspace_->runs[i];
    if (SeriesKey(r) != series) continue;
    const int col = r.store->ColumnIndex(*column);
    const auto row = r.store->FindByName(*name);
    w.StartObject();
    w.Key("run");
    w.Uint(static_cast<unsigned>(i));
    w.Key("label");
    w.String(r.label);
    w.Key("step");
    w.Int64(r.step);
    w.Key("value");
    if (col >= 0 && row) {
      WriteCell(w, r.store->Get(*row, col));
    } else {
      w.Null();
    }
    w.Key("level");
    w.String(row ? EnumName(r.store->level(*row)) : "none");
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return Ok(b);
}

ApiResponse Api::Heatmap(const Params& params) const {
  auto run = RunOf(*workspace_, params);
  if (!run) return Error(400, run.error().message());
  const std::string* column = Get(params, "column");
  if (column == nullptr || column->empty()) return Error(400, "column is required");
  auto limit = GetUint(params, "limit", 200, kMaxHeatmapOps);
  if (!limit) return Error(400, limit.error().message());
  const bool lower_worse = LowerIsWorse(*column);
  // Ranks of the same scope, and per (rank, op) the worst value of the column over the op's rows.
  std::vector<const Run*> ranks;
  std::vector<size_t> rank_ids;
  for (size_t i = 0; i < workspace_->runs.size(); ++i) {
    if (workspace_->runs[i]->scope == (*run)->scope) {
      ranks.push_back(workspace_->runs[i].get());
      rank_ids.push_back(i);
    }
  }
  std::vector<std::string> ops;
  std::unordered_map<std::string, size_t> op_index;
  std::vector<std::vector<double>> values;  // [rank][op], NaN when absent
  for (size_t k = 0; k < ranks.size(); ++k) {
    const ResultStore& s = *ranks[k]->store;
    const int col = s.ColumnIndex(*column);
    values.emplace_back(ops.size(), std::nan(""));
    for (uint32_t e = 0; e < s.entry_names().size(); ++e) {
      auto [it, inserted] = op_index.try_emplace(s.entry_names()[e], ops.size());
      if (inserted) {
        ops.push_back(s.entry_names()[e]);
        for (auto& v : values) v.resize(ops.size(), std::nan(""));
      }
      if (col < 0) continue;
      double agg = std::nan("");
      for (const uint32_t row : s.entry_rows(e)) {
        const Cell c = s.Get(row, col);
        if (!c.is_number) continue;
        if (std::isnan(agg) || (lower_worse ? c.number < agg : c.number > agg)) agg = c.number;
      }
      values[k][it->second] = agg;
    }
  }
  // Keep the `limit` ops with the worst value over the ranks, shown in execution order.
  std::vector<size_t> keep(ops.size());
  for (size_t o = 0; o < ops.size(); ++o) keep[o] = o;
  if (ops.size() > *limit) {
    auto worst_of = [&](size_t o) {
      double worst = std::nan("");
      for (const auto& v : values) {
        if (std::isnan(v[o])) continue;
        if (std::isnan(worst) || (lower_worse ? v[o] < worst : v[o] > worst)) worst = v[o];
      }
      if (std::isnan(worst)) return -std::numeric_limits<double>::infinity();
      return lower_worse ? -worst : worst;
    };
    std::vector<double> score(ops.size());
    for (size_t o = 0; o < ops.size(); ++o) score[o] = worst_of(o);
    std::stable_sort(keep.begin(), keep.end(),
                     [&](size_t a, size_t b) { return score[a] > score[b]; });
    keep.resize(*limit);
    std::sort(keep.begin(), keep.end());
  }
  Body b;
  JsonWriter& w = b.w;
  w.StartObject();
  w.Key("column");
  w.String(*column);
  w.Key("scope");
  w.String((*run)->scope);
  w.Key("total_ops");
  w.Uint64(ops.size());
  w.Key("ranks");
  w.StartArray();
  for (size_t k = 0; k < ranks.size(); ++k) {
    w.StartObject();
    w.Key("run");
    w.Uint64(rank_ids[k]);
    w.Key("label");
    w.String(ranks[k]->rank_folder.empty() ? ranks[k]->label : ranks[k]->rank_folder);
    w.EndObject();
  }
  w.EndArray();
  w.Key("ops");
  w.StartArray();
  for (const size_t o : keep) w.String(ops[o]);
  w.EndArray();
  w.Key("values");
  w.StartArray();
  for (size_t k = 0; k < ranks.size(); ++k) {
    w.StartArray();
    for (const size_t o : keep) {
      if (std::isnan(values[k][o])) {
        w.Null();
      } else {
        w.Double(values[k][o]);
      }
    }
    w.EndArray();
  }
  w.EndArray();
  w.EndObject();
  return Ok(b);
}

ApiResponse Api::Scan() const {
  if (!workspace_->scan) return Error(404, "no scan output was loaded");
  const JsonValue& doc = workspace_->scan->doc;
  Body b;
  JsonWriter& w = b.w;
  w.StartObject();
  w.Key("file");
  w.String(workspace_->scan->file);
  for (const auto& [key, value] : doc.object()) {
    if (key == "file") continue;
    w.Key(key);
    if (key == "headroom" && value.is_object()) {
      // Everything but the per-tensor rows, which /api/scan/headroom pages.
      w.StartObject();
      for (const auto& [hk, h] : value.object()) {
        if (hk == "flagged") {
          w.Key("flagged_count");
          w.Uint64(h.is_array() ? h.array().size() : 0);
          continue;
        }
        w.Key(hk);
        w.Value(h);
      }
      w.EndObject();
      continue;
    }
    w.Value(value);
  }
  w.EndObject();
  return Ok(b);
}

// The precheck_{ts}.json document as it is (the view sorts and filters its few thousand APIs).
ApiResponse Api::Precheck() const {
  if (!workspace_->precheck) return Error(404, "no precheck output was loaded");
  Body b;
  b.w.Value(workspace_->precheck->doc);
  return Ok(b);
}

ApiResponse Api::ScanHeadroom(const Params& params) const {
  if (!workspace_->scan) return Error(404, "no scan output was loaded");
  const JsonValue& doc = workspace_->scan->doc;
  auto offset = GetUint(params, "offset", 0, std::numeric_limits<uint32_t>::max());
  if (!offset) return Error(400, offset.error().message());
  auto limit = GetUint(params, "limit", 100, kMaxPage);
  if (!limit) return Error(400, limit.error().message());
  const std::string* q = Get(params, "q");
  const std::string* overflow = Get(params, "overflow");
  const bool only_overflow = overflow != nullptr && *overflow == "1";
  // scan_{ts}.json: "headroom": {"targets", "summary", "flagged": [{..., "fits": {target:
  // {"status", "overflow", ...}}}]}.
  const JsonValue* headroom = doc.Find("headroom");
  const JsonValue* rows = headroom != nullptr ? headroom->Find("flagged") : nullptr;
  std::vector<const JsonValue*> matches;
  if (rows != nullptr && rows->is_array()) {
    for (const JsonValue& row : rows->array()) {
      if (!row.is_object()) continue;
      if (q != nullptr && !q->empty()) {
        const JsonValue* t = row.Find("tensor");
        if (t == nullptr || !t->is_string() || t->string_value().find(*q) == std::string::npos) {
          continue;
        }
      }
      if (only_overflow) {
        bool any = false;
        const JsonValue* fits = row.Find("fits");
        if (fits != nullptr && fits->is_object()) {
          for (const auto& [target, fit] : fits->object()) {
            const JsonValue* o = fit.Find("overflow");
            if (o != nullptr && o->kind() == JsonValue::Kind::kBool && o->bool_value()) any = true;
          }
        }
        if (!any) continue;
      }
      matches.push_back(&row);
    }
  }
  Body b;
  JsonWriter& w = b.w;
  w.StartObject();
  w.Key("total");
  w.Uint64(matches.size());
  w.Key("rows");
  w.StartArray();
  for (uint64_t k = *offset; k < matches.size() && k < *offset + *limit; ++k) w.Value(*matches[k]);
  w.EndArray();
  w.EndObject();
  return Ok(b);
}

}  // namespace numprobe::ui
