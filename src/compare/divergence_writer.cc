// divergence_{ts}.json and msprobe's diff_analyze_{ts}.json.
#include <cmath>
#include <cstdio>
#include <string>
#include <tuple>

#include <fmt/format.h>
#include <rapidjson/stringbuffer.h>

#include "compare/compare_internal.h"
#include "compare/divergence_file.h"
#include "core/atomic_file.h"
#include "core/json_writer.h"
#include "msprobe/entry_name.h"
#include "msprobe/folder_number.h"

namespace numprobe {
namespace {

using Writer = JsonWriter<rapidjson::StringBuffer, /*kPretty=*/true>;

void Str(Writer& w, std::string_view s) { w.String(s); }

void Num(Writer& w, double v) { w.Double(v); }

void WriteOp(Writer& w, const DivergenceOp& op) {
  w.StartObject();
  w.Key("op_name");
  Str(w, op.op_name);
  w.Key("entry_index");
  w.Uint(op.entry);
  w.Key("direction");
  w.String(op.backward ? "backward" : "forward");
  w.Key("rule");
  Str(w, op.rule);
  w.Key("reason");
  Str(w, op.reason);
  w.Key("input_error");
  Num(w, op.input_error);
  w.Key("output_error");
  Num(w, op.output_error);
  w.Key("tolerance");
  Num(w, op.tolerance);
  w.Key("growth");
  Num(w, op.growth);
  w.Key("worst_output");
  Str(w, op.worst_output);
  w.Key("dtypes");
  Str(w, op.dtype_pair);
  w.Key("non_finite");
  w.Bool(op.non_finite);
  w.Key("module_path");
  w.StartArray();
  for (const std::string& m : op.module_path) Str(w, m);
  w.EndArray();
  w.Key("stack");
  w.StartArray();
  for (const std::string& line : op.stack) Str(w, line);
  w.EndArray();
  w.Key("at");
  Str(w, op.at);
  w.Key("arguments");
  w.StartArray();
  for (const ArgumentChange& a : op.arguments) {
    w.StartObject();
    w.Key("name");
    Str(w, a.name);
    w.Key("target");
    Str(w, a.target);
    w.Key("golden");
    Str(w, a.golden);
    w.EndObject();
  }
  w.EndArray();
  w.Key("cast");
  if (op.cast.has_value()) {
    w.StartObject();
    w.Key("name");
    Str(w, op.cast->name);
    w.Key("from");
    Str(w, op.cast->from_dtype);
    w.Key("to");
    Str(w, op.cast->to_dtype);
    w.Key("at");
    Str(w, op.cast->at);
    w.EndObject();
  } else {
    w.Null();
  }
  w.EndObject();
}

// msprobe's rank key: "rank_N" for rank{N} folders, else the folder name ("rank_0" for a file
// pair).
std::string RankKey(const RankDivergence& r) {
  const std::string_view name = r.rank;
  std::string key;
  if (const auto n = detail::FolderNumber(name, "rank")) {
    key = "rank_" + std::to_string(*n);
  } else if (name.empty() || name == "rank") {
    key = "rank_0";
  } else {
    key = std::string(name);
  }
  return r.scope.empty() ? key : r.scope + "/" + key;
}

// A summary value as msprobe's JSON holds it: numbers as numbers, the rest as its text.
void SummaryJson(Writer& w, const DumpFile& file, const PyValue& v) {
  const detail::SummaryValue s = detail::SummaryOf(file, v);
  if (s.type == detail::ValType::kNum && v.kind() != PyValue::Kind::kStr) {
    w.Double(s.number);
  } else if (s.is_float && std::isinf(s.number)) {
    w.String(s.number > 0 ? "Infinity" : "-Infinity");
  } else {
    Str(w, s.Text());
  }
}

// The step number of a scope ("step3", "graph/step3"), or -1 without one: an earlier step's
// divergence precedes any of a later step's, whatever their entry numbers.
int64_t StepOf(const std::string& scope) { return detail::ScopeStep(scope).value_or(-1); }

}  // namespace

int EarliestDivergence(const std::vector<RankDivergence>& ranks) {
  int best = -1;
  for (size_t i = 0; i < ranks.size(); ++i) {
    const auto& f = ranks[i].report.first;
    if (!f.has_value()) continue;
    if (best < 0) {
      best = static_cast<int>(i);
      continue;
    }
    const RankDivergence& b = ranks[static_cast<size_t>(best)];
    const DivergenceOp& bf = *b.report.first;
    if (std::make_tuple(StepOf(ranks[i].scope), f->backward, f->entry) <
        std::make_tuple(StepOf(b.scope), bf.backward, bf.entry)) {
      best = static_cast<int>(i);
    }
  }
  return best;
}

std::string DivergenceJsonText(const std::vector<RankDivergence>& ranks,
                               const std::vector<std::string>& missing) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer, JsonFileKind::kResult);
  w.SetIndent(' ', 1);
  w.StartObject();
  w.Key("numprobe_divergence");
  w.Int(1);
  const int earliest = EarliestDivergence(ranks);
  w.Key("first");
  if (earliest < 0) {
    w.Null();
  } else {
    const RankDivergence& r = ranks[static_cast<size_t>(earliest)];
    w.StartObject();
    w.Key("scope");
    Str(w, r.scope);
    w.Key("rank");
    Str(w, r.rank);
    w.Key("op");
    WriteOp(w, *r.report.first);
    w.EndObject();
  }
  w.Key("ranks");
  w.StartArray();
  for (const RankDivergence& r : ranks) {
    w.StartObject();
    w.Key("scope");
    Str(w, r.scope);
    w.Key("rank");
    Str(w, r.rank);
    w.Key("mode");
    Str(w, std::string(EnumName(r.mode)));
    w.Key("ops_examined");
    w.Int64(r.report.ops_examined);
    w.Key("rows_over_tolerance");
    w.Int64(r.report.rows_over_tolerance);
    w.Key("first_over_tolerance");
    Str(w, r.report.first_over_tolerance);
    w.Key("first");
    if (r.report.first.has_value()) {
      WriteOp(w, *r.report.first);
    } else {
      w.Null();
    }
    w.Key("next");
    w.StartArray();
    for (const DivergenceOp& op : r.report.next) WriteOp(w, op);
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.Key("missing");
  w.StartArray();
  for (const std::string& m : missing) Str(w, m);
  w.EndArray();
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize()) + "\n";
}

Status WriteDivergenceJson(const std::vector<RankDivergence>& ranks,
                           const std::vector<std::string>& missing,
                           const std::filesystem::path& path) {
  return detail::WriteFileAtomically(path, DivergenceJsonText(ranks, missing));
}

std::string DiffAnalyzeMember(const RankDivergence& r) {
  if (!r.report.first.has_value() || r.table == nullptr) return {};
  // Rendered as a one-member document whose braces are then cut off, so that the member stands
  // exactly as in the whole file (indented for depth 1): WriteDiffAnalyzeFile joins members.
  rapidjson::StringBuffer buffer;
  Writer w(buffer, JsonFileKind::kResult);
  w.SetIndent(' ', 2);
  w.StartObject();
  const DivergenceOp& op = *r.report.first;
  const CompareTable& t = *r.table;
  const DumpFile& tf = *t.target;
  w.Key(RankKey(r));
  w.StartArray();
  w.StartObject();
  w.Key("op_name");
  Str(w, op.op_name);
  w.Key("data_info");
  w.StartObject();
  const DumpEntry& entry = tf.entries[op.entry];
  for (const RowState state : {RowState::kInput, RowState::kOutput}) {
    w.Key(state == RowState::kInput ? "input" : "output");
    w.StartObject();
    for (uint32_t i = entry.first_row; i < entry.first_row + entry.row_count; ++i) {
      const DumpRow& row = tf.rows[i];
      if (row.state != state) continue;
      Str(w, row.name);
      w.StartObject();
      if (t.mode == CompareMode::kMd5) {
        w.Key("NPU MD5");  // msprobe's md5-mode node
        Str(w, row.md5.value_or("N/A"));
      } else {
        static constexpr const char* kKeys[4] = {"NPU max", "NPU min", "NPU mean", "NPU l2norm"};
        for (int k = 0; k < 4; ++k) {
          w.Key(kKeys[k]);
          SummaryJson(w, tf, row.stats[k]);
        }
      }
      w.EndObject();
    }
    w.EndObject();
  }
  w.EndObject();
  w.Key("stack_info");
  if (op.stack.empty()) {
    w.Null();
  } else {
    w.StartArray();
    for (const std::string& line : op.stack) Str(w, line);
    w.EndArray();
  }
  w.EndObject();
  w.EndArray();
  w.EndObject();
  const std::string_view doc(buffer.GetString(), buffer.GetSize());  // "{\n" MEMBER "\n}"
  return std::string(doc.substr(2, doc.size() - 4));
}

Status WriteDiffAnalyzeFile(const std::vector<std::string>& members,
                            const std::filesystem::path& path) {
  // As RapidJSON's pretty writer joins an object's members: "{}" when there are none.
  std::string text;
  for (const std::string& m : members) {
    if (m.empty()) continue;
    text += text.empty() ? "{\n" : ",\n";
    text += m;
  }
  text += text.empty() ? "{}\n" : "\n}\n";
  return detail::WriteFileAtomically(path, text);
}

Status WriteDiffAnalyzeJson(const std::vector<RankDivergence>& ranks,
                            const std::filesystem::path& path) {
  std::vector<std::string> members;
  members.reserve(ranks.size());
  for (const RankDivergence& r : ranks) members.push_back(DiffAnalyzeMember(r));
  return WriteDiffAnalyzeFile(members, path);
}

}  // namespace numprobe
