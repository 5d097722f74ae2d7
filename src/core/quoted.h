// Quoted(): an untrusted name (zip member, header key, descr) as it may appear inside a one-line
// error message: in single quotes, control bytes, quotes, backslashes and non-ASCII bytes
// escaped as \xNN, and cut after `max_chars` characters.
#ifndef NUMPROBE_CORE_QUOTED_H_
#define NUMPROBE_CORE_QUOTED_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace numprobe::detail {

inline std::string Quoted(std::string_view text, size_t max_chars = 200) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "'";
  for (size_t i = 0; i < text.size() && i < max_chars; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c >= 0x7f || c == '\'' || c == '\\') {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  if (text.size() > max_chars) out += "...";
  return out + "'";
}

}  // namespace numprobe::detail

#endif  // NUMPROBE_CORE_QUOTED_H_
