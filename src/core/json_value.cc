// JsonValue and its Python-compatible serializer (the writer of msprobe's files and the capture
// journal; core/json_writer.h lists every file kind's writer). The serializer is hand-written
// because no JSON library reproduces Python's float repr and json.dumps layout. Reading is
// core/json.h's.
#include "numprobe/json_value.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>


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

std::string PythonFloatRepr(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  // Shortest round-trip digits, then laid out as CPython's float_repr_style 'short' does:
  // exponent form when the decimal point would sit before -4 or after 16 digits.
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), value, std::chars_format::scientific);
  std::string_view sci(buf, static_cast<size_t>(res.ptr - buf));
  std::string out;
  if (!sci.empty() && sci.front() == '-') {
    out.push_back('-');
    sci.remove_prefix(1);
  }
  const size_t e_pos = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e_pos)) {
    if (c != '.') digits.push_back(c);
  }
  int exponent = 0;
  std::string_view exp_text = sci.substr(e_pos + 1);
  if (!exp_text.empty() && exp_text.front() == '+') exp_text.remove_prefix(1);
  std::from_chars(exp_text.data(), exp_text.data() + exp_text.size(), exponent);
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  const int decpt = exponent + 1;  // value = 0.digits * 10^decpt
  const int n = static_cast<int>(digits.size());
  if (decpt <= -4 || decpt > 16) {
    out.push_back(digits[0]);
    if (n > 1) {
      out.push_back('.');
      out.append(digits, 1, std::string::npos);
    }
    char exp_buf[16];
    std::snprintf(exp_buf, sizeof(exp_buf), "e%c%02d", exponent < 0 ? '-' : '+',
                  exponent < 0 ? -exponent : exponent);
    out.append(exp_buf);
  } else if (decpt <= 0) {
    out.append("0.");
    out.append(static_cast<size_t>(-decpt), '0');
    out.append(digits);
  } else if (decpt < n) {
    out.append(digits, 0, static_cast<size_t>(decpt));
    out.push_back('.');
    out.append(digits, static_cast<size_t>(decpt), std::string::npos);
  } else {
    out.append(digits);
    out.append(static_cast<size_t>(decpt - n), '0');
    out.append(".0");
  }
  return out;
}

namespace {

void AppendHex4(unsigned code, std::string* out) {
  char buf[8];
  std::snprintf(buf, sizeof(buf), "\\u%04x", code & 0xFFFFu);
  out->append(buf);
}

// Decodes one UTF-8 sequence at s[i]; returns the code point (U+FFFD for invalid bytes) and
// advances i.
unsigned DecodeUtf8(std::string_view s, size_t* i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned c = byte(*i);
  int extra = 0;
  unsigned cp = 0;
  if (c < 0x80) {
    ++*i;
    return c;
  }
  if ((c & 0xE0) == 0xC0) {
    extra = 1;
    cp = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    extra = 2;
    cp = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    extra = 3;
    cp = c & 0x07;
  } else {
    ++*i;
    return 0xFFFD;
  }
  if (*i + static_cast<size_t>(extra) >= s.size()) {
    *i = s.size();
    return 0xFFFD;
  }
  for (int k = 1; k <= extra; ++k) {
    const unsigned b = byte(*i + static_cast<size_t>(k));
    if ((b & 0xC0) != 0x80) {
      *i += static_cast<size_t>(k);
      return 0xFFFD;
    }
    cp = (cp << 6) | (b & 0x3F);
  }
  *i += static_cast<size_t>(extra) + 1;
  if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0xFFFD;
  return cp;
}

// json.dumps' string form with ensure_ascii=True.
void AppendString(std::string_view s, std::string* out) {
  out->push_back('"');
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      const unsigned cp = DecodeUtf8(s, &i);
      if (cp >= 0x10000) {
        const unsigned v = cp - 0x10000;
        AppendHex4(0xD800 + (v >> 10), out);
        AppendHex4(0xDC00 + (v & 0x3FF), out);
      } else {
        AppendHex4(cp, out);
      }
      continue;
    }
    ++i;
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      case '\b':
        out->append("\\b");
        break;
      case '\f':
        out->append("\\f");
        break;
      default:
        if (c < 0x20) {
          AppendHex4(c, out);
        } else {
          out->push_back(static_cast<char>(c));
        }
    }
  }
  out->push_back('"');
}

void AppendDouble(double v, std::string* out) {
  if (std::isnan(v)) {
    out->append("NaN");
  } else if (std::isinf(v)) {
    out->append(v > 0 ? "Infinity" : "-Infinity");
  } else {
    out->append(PythonFloatRepr(v));
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
