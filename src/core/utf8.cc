// Written by hand: the decoders Debian packages (iconv, ICU, utf8cpp) have no "surrogatepass"
// rule and do not report maximal subparts in a form a caller can choose what to do with.
#include "core/utf8.h"

#include <cstring>

namespace numprobe::detail {

Utf8Char DecodeUtf8(std::string_view text, size_t i, Utf8Rule rule) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned lead = byte(i);
  Utf8Char out;
  out.code = lead;
  if (lead < 0x80) {
    out.valid = true;
    return out;
  }
  // Length and the range of the second byte (Unicode's table of well-formed byte sequences);
  // later bytes are always 80..BF.
  size_t length = 0;
  unsigned low = 0x80;
  unsigned high = 0xBF;
  uint32_t code = 0;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
    code = lead & 0x1Fu;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    code = lead & 0x0Fu;
    if (lead == 0xE0) low = 0xA0;                                // shorter forms are overlong
    if (lead == 0xED && rule == Utf8Rule::kStrict) high = 0x9F;  // A0..BF are surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    code = lead & 0x07u;
    if (lead == 0xF0) low = 0x90;   // overlong
    if (lead == 0xF4) high = 0x8F;  // above U+10FFFF
  } else {
    return out;  // a continuation byte, C0/C1 (overlong) or F5..FF: a subpart of one byte
  }
  for (size_t k = 1; k < length; ++k) {
    if (i + k >= text.size()) {
      out.length = static_cast<uint8_t>(k);  // truncated: every byte so far is the subpart
      return out;
    }
    const unsigned c = byte(i + k);
    const unsigned min = k == 1 ? low : 0x80;
    const unsigned max = k == 1 ? high : 0xBF;
    if (c < min || c > max) {
      out.length = static_cast<uint8_t>(k);
      return out;
    }
    code = (code << 6) | (c & 0x3Fu);
  }
  out.code = code;
  out.length = static_cast<uint8_t>(length);
  out.valid = true;
  return out;
}

Utf8Prefix WellFormedUtf8Prefix(std::string_view text, Utf8Rule rule) {
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    // Text to check is mostly ASCII (JSON files, names): eight bytes at a time while it is.
    constexpr uint64_t kHighBits = 0x8080808080808080u;
    uint64_t word = 0;
    while (i + sizeof word <= n) {
      std::memcpy(&word, text.data() + i, sizeof word);
      if ((word & kHighBits) != 0) break;
      i += sizeof word;
    }
    if (i == n) break;
    if (static_cast<unsigned char>(text[i]) < 0x80) {
      ++i;
      continue;
    }
    const Utf8Char c = DecodeUtf8(text, i, rule);
    if (!c.valid) {
      // DecodeUtf8 stops at the end of `text` only for a lead byte whose sequence it cuts.
      const unsigned lead = static_cast<unsigned char>(text[i]);
      return {i, lead >= 0xC2 && lead <= 0xF4 && i + c.length == n};
    }
    i += c.length;
  }
  return {n, false};
}

bool IsValidUtf8(std::string_view text, Utf8Rule rule) {
  return WellFormedUtf8Prefix(text, rule).length == text.size();
}

uint32_t NextCodePoint(std::string_view text, size_t* i, Utf8Rule rule, Utf8Invalid invalid) {
  const Utf8Char c = DecodeUtf8(text, *i, rule);
  if (c.valid) {
    *i += c.length;
    return c.code;
  }
  if (invalid == Utf8Invalid::kLatin1) {
    ++*i;
    return c.code;
  }
  *i += c.length;
  return kReplacementChar;
}

void AppendUtf8(uint32_t code, std::string* out) {
  if (code > kMaxCodePoint) code = kReplacementChar;
  if (code < 0x80) {
    out->push_back(static_cast<char>(code));
  } else if (code < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (code >> 6)));
    out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
  } else if (code < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (code >> 12)));
    out->push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (code >> 18)));
    out->push_back(static_cast<char>(0x80 | ((code >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
  }
}

size_t Utf8PrefixLength(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text.size();
  size_t end = max_bytes;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return end;
}

}  // namespace numprobe::detail
