#include "core/py_format.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace numprobe::detail {

std::string PyFloatRepr(double v) {
  std::string out;
  AppendPyFloatRepr(v, &out);
  return out;
}

std::string_view FormatPyFloatRepr(double v, char (&buffer)[kPyFloatReprBytes]) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  // Zero is the most common value of a compare's difference columns.
  if (v == 0) return std::signbit(v) ? "-0.0" : "0.0";
  // The shortest round-trip digits are fmt's Dragonbox (Python's repr has the same digits); the
  // layout around them is Python's (format_float_short, mode 'r'), written here because fmt's
  // general float writer cost twice its digits, and a large compare writes tens of millions:
  // positional while -4 < decpt <= 16, else d.ddde+XX with at least two exponent digits.
  const auto decimal = fmt::detail::dragonbox::to_decimal(std::fabs(v));
  char digits[24];
  const char* digits_end = std::to_chars(digits, digits + sizeof(digits), decimal.significand).ptr;
  const auto ndigits = static_cast<int>(digits_end - digits);
  const int decpt = ndigits + decimal.exponent;  // the value is 0.DIGITS x 10^decpt
  char* out = buffer;
  if (std::signbit(v)) *out++ = '-';
  const auto put = [&out](const char* from, int count) {
    std::memcpy(out, from, static_cast<size_t>(count));
    out += count;
  };
  const auto zeros = [&out](int count) {
    std::memset(out, '0', static_cast<size_t>(count));
    out += count;
  };
  if (decpt > -4 && decpt <= 16) {
    if (decpt <= 0) {  // 0.000DIGITS
      put("0.", 2);
      zeros(-decpt);
      put(digits, ndigits);
    } else if (decpt >= ndigits) {  // DIGITS000.0
      put(digits, ndigits);
      zeros(decpt - ndigits);
      put(".0", 2);
    } else {  // DIG.ITS
      put(digits, decpt);
      *out++ = '.';
      put(digits + decpt, ndigits - decpt);
    }
  } else {  // D.IGITSe-XX
    *out++ = digits[0];
    if (ndigits > 1) {
      *out++ = '.';
      put(digits + 1, ndigits - 1);
    }
    const int exponent = decpt - 1;
    *out++ = 'e';
    *out++ = exponent < 0 ? '-' : '+';
    if (std::abs(exponent) < 10) *out++ = '0';
    out = std::to_chars(out, buffer + kPyFloatReprBytes, std::abs(exponent)).ptr;
  }
  return {buffer, static_cast<size_t>(out - buffer)};
}

std::string_view FormatShortestFloat(double v, char (&buffer)[kPyFloatReprBytes]) {
  // The only way a repr ends in ".0" is a whole number's: Dragonbox's digits have no trailing
  // zero, so a fraction never ends in 0 and the exponent form never ends in ".0".
  std::string_view text = FormatPyFloatRepr(v, buffer);
  if (text.ends_with(".0")) text.remove_suffix(2);
  return text;
}

void AppendPyFloatRepr(double v, std::string* out) {
  char buffer[kPyFloatReprBytes];
  out->append(FormatPyFloatRepr(v, buffer));
}

std::string PyFloat32Repr(float v) {
  std::string out;
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (v == 0) return std::signbit(v) ? "-0.0" : "0.0";
  // numpy picks the form by the value, not by its shortest digits as Python's repr does: a
  // float32 just under 1e-4 whose shortest digits are "1e-4" is "1e-04", not "0.0001".
  const float magnitude = std::fabs(v);
  const bool positional = 1e-4L <= magnitude && magnitude < 1e16L;
  // Shortest round-trip digits in scientific form: "-d.ddde-XX".
  char sci[32];
  const auto [sci_end, ec] =
      std::to_chars(sci, sci + sizeof(sci), v, std::chars_format::scientific);
  std::string_view text(sci, static_cast<size_t>(sci_end - sci));
  if (text.front() == '-') {
    out.push_back('-');
    text.remove_prefix(1);
  }
  const size_t e = text.find('e');
  std::string digits;
  for (const char c : text.substr(0, e)) {
    if (c != '.') digits.push_back(c);
  }
  int exponent = 0;
  const std::string_view exp_text = text.substr(e + 1);
  std::from_chars(exp_text.data() + (exp_text.front() == '+' ? 1 : 0),
                  exp_text.data() + exp_text.size(), exponent);
  const auto ndigits = static_cast<int>(digits.size());
  if (!positional) {
    out += digits.front();
    if (ndigits > 1) out += "." + digits.substr(1);
    out += fmt::format("e{}{:02d}", exponent < 0 ? '-' : '+', std::abs(exponent));
    return out;
  }
  const int decpt = exponent + 1;  // value = 0.DIGITS x 10^decpt
  if (decpt <= 0) {
    out += "0." + std::string(static_cast<size_t>(-decpt), '0') + digits;
  } else if (decpt >= ndigits) {
    out += digits + std::string(static_cast<size_t>(decpt - ndigits), '0') + ".0";
  } else {
    out += digits.substr(0, static_cast<size_t>(decpt)) + "." +
           digits.substr(static_cast<size_t>(decpt));
  }
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
