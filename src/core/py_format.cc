#include "core/py_format.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace numprobe::detail {

std::string PyFloatRepr(double v) {
  std::string out;
  AppendPyFloatRepr(v, &out);
  return out;
}

namespace {

// Lays out shortest round-trip digits given in scientific form ("-d.ddde-XX") as Python's repr
// does (numpy's str of a float32 follows the same rules with float32's digits).
template <typename F>
void AppendRepr(F v, std::string* out) {
  if (std::isnan(v)) {
    *out += "nan";
    return;
  }
  if (std::isinf(v)) {
    *out += v > 0 ? "inf" : "-inf";
    return;
  }
  if (v == 0) {
    *out += std::signbit(v) ? "-0.0" : "0.0";
    return;
  }
  // Shortest round-trip digits in scientific form: "-d.ddde-XX".
  char sci[64];
  const auto [end, ec] = std::to_chars(sci, sci + sizeof(sci), v, std::chars_format::scientific);
  const char* p = sci;
  char buf[64];
  size_t n = 0;
  if (*p == '-') {
    buf[n++] = '-';
    ++p;
  }
  char digits[32] = {};
  int ndigits = 0;
  while (p < end && *p != 'e') {
    if (*p != '.') digits[ndigits++] = *p;
    ++p;
  }
  int exponent = 0;
  std::from_chars(p + 1 + (p[1] == '+' ? 1 : 0), end, exponent);
  const int decpt = exponent + 1;  // value = 0.DIGITS x 10^decpt
  if (decpt <= -4 || decpt > 16) {
    buf[n++] = digits[0];
    if (ndigits > 1) {
      buf[n++] = '.';
      for (int i = 1; i < ndigits; ++i) buf[n++] = digits[i];
    }
    n += static_cast<size_t>(std::snprintf(buf + n, sizeof(buf) - n, "e%c%02d",
                                           exponent < 0 ? '-' : '+',
                                           exponent < 0 ? -exponent : exponent));
  } else if (decpt <= 0) {
    buf[n++] = '0';
    buf[n++] = '.';
    for (int i = 0; i < -decpt; ++i) buf[n++] = '0';
    for (int i = 0; i < ndigits; ++i) buf[n++] = digits[i];
  } else if (decpt >= ndigits) {
    for (int i = 0; i < ndigits; ++i) buf[n++] = digits[i];
    for (int i = ndigits; i < decpt; ++i) buf[n++] = '0';
    buf[n++] = '.';
    buf[n++] = '0';
  } else {
    for (int i = 0; i < decpt; ++i) buf[n++] = digits[i];
    buf[n++] = '.';
    for (int i = decpt; i < ndigits; ++i) buf[n++] = digits[i];
  }
  out->append(buf, n);
}

}  // namespace

void AppendPyFloatRepr(double v, std::string* out) { AppendRepr(v, out); }

std::string PyFloat32Repr(float v) {
  std::string out;
  AppendRepr(v, &out);
  return out;
}

namespace {

// glibc's printf is exact and rounds ties to even on the exact binary value, as CPython's dtoa.
double RoundThroughText(double v, int digits) {
  if (!std::isfinite(v)) return v;
  char buf[512];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return std::strtod(buf, nullptr);
}

}  // namespace

double PyRound(double v, int digits) { return RoundThroughText(v, digits); }

double PyFormatValue12(double v) { return RoundThroughText(v, 12); }

std::string PyStrRepr(std::string_view s) {
  const bool has_single = s.find('\'') != std::string_view::npos;
  const bool has_double = s.find('"') != std::string_view::npos;
  const char quote = has_single && !has_double ? '"' : '\'';
  std::string out;
  out.reserve(s.size() + 2);
  out.push_back(quote);
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (ch == '\\') {
      out += "\\\\";
    } else if (ch == quote) {
      out.push_back('\\');
      out.push_back(ch);
    } else if (ch == '\n') {
      out += "\\n";
    } else if (ch == '\r') {
      out += "\\r";
    } else if (ch == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "\\x%02x", c);
      out += hex;
    } else {
      out.push_back(ch);
    }
  }
  out.push_back(quote);
  return out;
}

std::string PyStrListRepr(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ", ";
    out += PyStrRepr(items[i]);
  }
  out += ']';
  return out;
}

void AppendJsonString(std::string_view s, std::string* out, JsonStringStyle style) {
  out->push_back('"');
  size_t i = 0;
  char hex[16];
  while (i < s.size()) {
    const char ch = s[i];
    switch (ch) {
      case '"':
        *out += "\\\"";
        ++i;
        continue;
      case '\\':
        *out += "\\\\";
        ++i;
        continue;
      case '\n':
        *out += "\\n";
        ++i;
        continue;
      case '\r':
        *out += "\\r";
        ++i;
        continue;
      case '\t':
        *out += "\\t";
        ++i;
        continue;
      case '\b':
        *out += "\\b";
        ++i;
        continue;
      case '\f':
        *out += "\\f";
        ++i;
        continue;
      default:
        break;
    }
    // A run of printable ASCII (the whole of most names and paths) is copied as it is.
    size_t end = i;
    while (end < s.size()) {
      const auto c = static_cast<unsigned char>(s[end]);
      if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') break;
      ++end;
    }
    if (end > i) {
      out->append(s.data() + i, end - i);
      i = end;
      continue;
    }
    const uint32_t cp = NextCodePoint(s, &i, Utf8Rule::kStrict, style.invalid);
    if ((cp >= 0x20 && cp < 0x7f) || (cp == 0x7f && !style.escape_del)) {
      out->push_back(static_cast<char>(cp));
    } else if (cp < 0x10000) {
      std::snprintf(hex, sizeof(hex), "\\u%04x", cp);
      *out += hex;
    } else {
      const uint32_t v = cp - 0x10000;
      std::snprintf(hex, sizeof(hex), "\\u%04x\\u%04x", 0xd800 + (v >> 10), 0xdc00 + (v & 0x3ff));
      *out += hex;
    }
  }
  out->push_back('"');
}

std::string JsonStringList(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ", ";
    AppendJsonString(items[i], &out, {.invalid = Utf8Invalid::kLatin1});
  }
  out += ']';
  return out;
}

bool ParsePyNumber(std::string_view text, double* value) {
  // Trim the whitespace Python's float() ignores.
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t' || text.front() == '\n')) {
    text.remove_prefix(1);
  }
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\n')) {
    text.remove_suffix(1);
  }
  if (text.empty() || text.size() > 400) return false;
  for (const char c : text) {
    const bool ok =
        (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-';
    if (!ok) return false;  // rejects hex, "nan", "inf" and anything that is not a plain number
  }
  const std::string copy(text);
  char* end = nullptr;
  const double v = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size()) return false;
  *value = v;
  return true;
}

}  // namespace numprobe::detail
