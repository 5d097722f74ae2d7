// JsonValue and its Python-compatible serializer (the writer of msprobe's files and the capture
// journal; core/json_writer.h lists every file kind's writer). The serializer is hand-written
// because no JSON library reproduces Python's float repr and json.dumps layout. Reading is
// core/json.h's.
#include "numprobe/json_value.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

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

double JsonValue::number_value() const {
  switch (kind()) {
    case Kind::kInt:
      return static_cast<double>(int_value());
    case Kind::kDouble:
      return double_value();
    case Kind::kBigInt:
      return std::strtod(big_int_digits().c_str(), nullptr);
    default:
      return 0;
  }
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
    case JsonValue::Kind::kBigInt:
      out->append(value.big_int_digits());
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

}  // namespace

void AppendJson(const JsonValue& value, int indent, std::string* out) {
  AppendValue(value, indent, 0, out);
}

std::string ToJson(const JsonValue& value, int indent) {
  std::string out;
  AppendJson(value, indent, &out);
  return out;
}

}  // namespace numprobe
