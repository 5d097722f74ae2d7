// divergence_{ts}.json read back into DivergenceReport (compare/divergence_file.h); the writer is
// divergence_writer.cc.
#include "compare/divergence_file.h"

#include <cmath>
#include <limits>
#include <string>

#include "core/json.h"

namespace numprobe {
namespace {

std::string Text(const JsonValue& v, std::string_view key) {
  const JsonValue* m = v.Find(key);
  return m != nullptr && m->is_string() ? m->string_value() : std::string();
}

// A figure of the writer's: a number, or (non-finite) the string "Infinity" / "-Infinity" /
// "NaN" (also the UI's "inf" / "-inf").
double Figure(const JsonValue& v, std::string_view key) {
  const JsonValue* m = v.Find(key);
  if (m == nullptr) return std::nan("");
  if (m->is_number()) return m->number_value();
  if (m->is_string()) {
    const std::string& t = m->string_value();
    if (t == "Infinity" || t == "inf") return std::numeric_limits<double>::infinity();
    if (t == "-Infinity" || t == "-inf") return -std::numeric_limits<double>::infinity();
  }
  return std::nan("");
}

std::vector<std::string> Lines(const JsonValue& v, std::string_view key) {
  std::vector<std::string> out;
  const JsonValue* m = v.Find(key);
  if (m == nullptr || !m->is_array()) return out;
  for (const JsonValue& x : m->array()) {
    if (x.is_string()) out.push_back(x.string_value());
  }
  return out;
}

int64_t Count(const JsonValue& v, std::string_view key) {
  const JsonValue* m = v.Find(key);
  return m != nullptr && m->kind() == JsonValue::Kind::kInt ? m->int_value() : 0;
}

std::optional<DivergenceOp> OpOf(const JsonValue* v) {
  if (v == nullptr || !v->is_object()) return std::nullopt;
  DivergenceOp op;
  op.op_name = Text(*v, "op_name");
  if (op.op_name.empty()) return std::nullopt;
  const int64_t entry = Count(*v, "entry_index");
  op.entry = entry >= 0 && entry <= UINT32_MAX ? static_cast<uint32_t>(entry) : 0;
  op.backward = Text(*v, "direction") == "backward";
  op.reason = Text(*v, "reason");
  op.input_error = Figure(*v, "input_error");
  op.output_error = Figure(*v, "output_error");
  op.tolerance = Figure(*v, "tolerance");
  op.growth = Figure(*v, "growth");
  op.worst_output = Text(*v, "worst_output");
  op.dtype_pair = Text(*v, "dtypes");
  const JsonValue* nf = v->Find("non_finite");
  op.non_finite = nf != nullptr && nf->kind() == JsonValue::Kind::kBool && nf->bool_value();
  op.module_path = Lines(*v, "module_path");
  op.stack = Lines(*v, "stack");
  op.rule = Text(*v, "rule");
  op.at = Text(*v, "at");
  if (const JsonValue* args = v->Find("arguments"); args != nullptr && args->is_array()) {
    for (const JsonValue& a : args->array()) {
      if (!a.is_object()) continue;
      op.arguments.push_back({Text(a, "name"), Text(a, "target"), Text(a, "golden")});
    }
  }
  if (const JsonValue* cast = v->Find("cast"); cast != nullptr && cast->is_object()) {
    op.cast =
        CastCause{Text(*cast, "name"), Text(*cast, "from"), Text(*cast, "to"), Text(*cast, "at")};
  }
  return op;
}

}  // namespace

Result<DivergenceFile> ParseDivergenceJson(std::string_view text) {
  // Written by numprobe as standard JSON; bare NaN/Infinity are read too.
  NUMPROBE_ASSIGN_OR_RETURN(const JsonValue doc, ParseJson(text, kPythonJson));
  if (!doc.is_object()) return Status::Corrupt("the root is not an object");
  DivergenceFile out;
  if (const JsonValue* ranks = doc.Find("ranks"); ranks != nullptr && ranks->is_array()) {
    for (const JsonValue& r : ranks->array()) {
      if (!r.is_object()) continue;
      const JsonValue* scope = r.Find("scope");
      const JsonValue* rank = r.Find("rank");
      if (scope == nullptr || rank == nullptr || !scope->is_string() || !rank->is_string()) {
        continue;
      }
      DivergenceFileRank& f = out.ranks.emplace_back();
      f.scope = scope->string_value();
      f.rank = rank->string_value();
      f.mode = Text(r, "mode");
      f.report.first = OpOf(r.Find("first"));
      if (const JsonValue* next = r.Find("next"); next != nullptr && next->is_array()) {
        for (const JsonValue& op : next->array()) {
          if (auto o = OpOf(&op)) f.report.next.push_back(std::move(*o));
        }
      }
      f.report.ops_examined = Count(r, "ops_examined");
      f.report.rows_over_tolerance = Count(r, "rows_over_tolerance");
      f.report.first_over_tolerance = Text(r, "first_over_tolerance");
    }
  }
  if (const JsonValue* missing = doc.Find("missing"); missing != nullptr && missing->is_array()) {
    for (const JsonValue& m : missing->array()) {
      if (m.is_string()) out.missing.push_back(m.string_value());
    }
  }
  return out;
}

}  // namespace numprobe
