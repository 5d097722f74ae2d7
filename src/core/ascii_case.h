// ASCII case rules for names, dtypes and number words, which are ASCII: std::tolower is a locale
// call per character, and these run for every row of large dumps and every UI query.
#ifndef NUMPROBE_CORE_ASCII_CASE_H_
#define NUMPROBE_CORE_ASCII_CASE_H_

#include <algorithm>
#include <string>
#include <string_view>

namespace numprobe::detail {

constexpr char AsciiLower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

inline std::string AsciiLowered(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = AsciiLower(c);
  return out;
}

// Whether `text` lowered is `lower` (already lower case), without a lowered copy.
constexpr bool EqualsLowered(std::string_view text, std::string_view lower) {
  return text.size() == lower.size() &&
         std::equal(text.begin(), text.end(), lower.begin(),
                    [](char a, char b) { return AsciiLower(a) == b; });
}

constexpr bool StartsWithLowered(std::string_view text, std::string_view lower) {
  return text.size() >= lower.size() && EqualsLowered(text.substr(0, lower.size()), lower);
}

}  // namespace numprobe::detail

#endif  // NUMPROBE_CORE_ASCII_CASE_H_
