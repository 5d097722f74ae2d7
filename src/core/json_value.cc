// JsonValue, Python-compatible JSON writing, and parsing through RapidJSON (which reads the
// NaN/Infinity tokens with kParseNanAndInfFlag). The writer is hand-written because no JSON
// library reproduces Python's float repr and json.dumps layout, which msprobe's files use.
#include "numprobe/json_value.h"

#include <cmath>
#include <string>

#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include "core/py_format.h"

namespace numprobe {

const JsonValue* JsonValue::Find(std::string_view key) const {
  if (!is_object()) return nullptr;
  for (const Member& m : object()) {
    if (m.first == key) return &m.second;
  }
  return nullptr;
}

JsonValue* JsonValue::Find(std::string_view key) {
  return const_cast<JsonValue*>(static_cast<const JsonValue*>(this)->Find(key));
}

void JsonValue::Set(std::string key, JsonValue value) {
  if (!is_object()) *this = MakeObject();
  if (JsonValue* existing = Find(key)) {
    *existing = std::move(value);
    return;
  }
  object().emplace_back(std::move(key), std::move(value));
}

void JsonValue::Update(JsonValue other) {
  if (!other.is_object()) return;
  for (Member& m : other.object()) Set(std::move(m.first), std::move(m.second));
}

std::string PythonFloatRepr(double value) { return detail::PyFloatRepr(value); }

namespace {

// json.dumps' string form with ensure_ascii=True; bytes that are not UTF-8 become U+FFFD.
void AppendString(std::string_view s, std::string* out) {
  detail::AppendJsonString(s, out, {.invalid = detail::Utf8Invalid::kReplace, .escape_del = false});
}

void AppendDouble(double v, std::string* out) {
  if (std::isnan(v)) {
    out->append("NaN");
  } else if (std::isinf(v)) {
    out->append(v > 0 ? "Infinity" : "-Infinity");
  } else {
    detail::AppendPyFloatRepr(v, out);
  }
}

void AppendNewline(int indent, int depth, std::string* out) {
  out->push_back('\n');
  out->append(static_cast<size_t>(indent) * static_cast<size_t>(depth), ' ');
}

void AppendValue(const JsonValue& value, int indent, int depth, std::string* out) {
  switch (value.kind()) {
    case JsonValue::Kind::kNull:
      out->append("null");
      return;
    case JsonValue::Kind::kBool:
      out->append(value.bool_value() ? "true" : "false");
      return;
    case JsonValue::Kind::kInt:
      out->append(std::to_string(value.int_value()));
      return;
    case JsonValue::Kind::kDouble:
      AppendDouble(value.double_value(), out);
      return;
    case JsonValue::Kind::kString:
      AppendString(value.string_value(), out);
      return;
    case JsonValue::Kind::kArray: {
      const auto& items = value.array();
      if (items.empty()) {
        out->append("[]");
        return;
      }
      out->push_back('[');
      for (size_t i = 0; i < items.size(); ++i) {
        if (i > 0) out->push_back(',');
        if (indent >= 0) AppendNewline(indent, depth + 1, out);
        AppendValue(items[i], indent, depth + 1, out);
      }
      if (indent >= 0) AppendNewline(indent, depth, out);
      out->push_back(']');
      return;
    }
    case JsonValue::Kind::kObject: {
      const auto& members = value.object();
      if (members.empty()) {
        out->append("{}");
        return;
      }
      out->push_back('{');
      for (size_t i = 0; i < members.size(); ++i) {
        if (i > 0) out->push_back(',');
        if (indent >= 0) AppendNewline(indent, depth + 1, out);
        AppendString(members[i].first, out);
        out->append(indent >= 0 ? ": " : ":");
        AppendValue(members[i].second, indent, depth + 1, out);
      }
      if (indent >= 0) AppendNewline(indent, depth, out);
      out->push_back('}');
      return;
    }
  }
}

// Nesting deeper than this is refused (msprobe's own limit for nested arguments is far lower).
constexpr int kMaxDepth = 256;

JsonValue FromRapid(const rapidjson::Value& v, int depth, bool* too_deep) {
  if (depth > kMaxDepth) {
    *too_deep = true;
    return {};
  }
  if (v.IsNull()) return {};
  if (v.IsBool()) return JsonValue::Bool(v.GetBool());
  if (v.IsInt64()) return JsonValue::Int(v.GetInt64());
  if (v.IsNumber()) return JsonValue::Double(v.GetDouble());
  if (v.IsString()) return JsonValue::String(std::string(v.GetString(), v.GetStringLength()));
  if (v.IsArray()) {
    JsonValue::Array items;
    items.reserve(v.Size());
    for (const auto& item : v.GetArray()) items.push_back(FromRapid(item, depth + 1, too_deep));
    return JsonValue::MakeArray(std::move(items));
  }
  JsonValue::Object members;
  members.reserve(v.MemberCount());
  for (const auto& m : v.GetObject()) {
    members.emplace_back(std::string(m.name.GetString(), m.name.GetStringLength()),
                         FromRapid(m.value, depth + 1, too_deep));
  }
  return JsonValue::MakeObject(std::move(members));
}

}  // namespace

void AppendJson(const JsonValue& value, int indent, std::string* out) {
  AppendValue(value, indent, 0, out);
}

std::string ToJson(const JsonValue& value, int indent) {
  std::string out;
  AppendJson(value, indent, &out);
  return out;
}

Result<JsonValue> ParseJson(std::string_view text) {
  rapidjson::Document doc;
  constexpr unsigned kFlags = rapidjson::kParseNanAndInfFlag | rapidjson::kParseFullPrecisionFlag |
                              rapidjson::kParseIterativeFlag;
  doc.Parse<kFlags>(text.data(), text.size());
  if (doc.HasParseError()) {
    return Status::Corrupt(std::string("JSON error at offset ") +
                           std::to_string(doc.GetErrorOffset()) + ": " +
                           rapidjson::GetParseError_En(doc.GetParseError()));
  }
  bool too_deep = false;
  JsonValue value = FromRapid(doc, 0, &too_deep);
  if (too_deep) {
    return Status::OutOfRange("JSON nesting deeper than " + std::to_string(kMaxDepth));
  }
  return value;
}

}  // namespace numprobe
