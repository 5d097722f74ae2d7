#include "msprobe/entry_name.h"

namespace numprobe::detail {

std::vector<std::string_view> SplitDots(std::string_view name) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t dot = name.find('.', start);
    if (dot == std::string_view::npos) {
      parts.push_back(name.substr(start));
      return parts;
    }
    parts.push_back(name.substr(start, dot - start));
    start = dot + 1;
  }
}

std::pair<std::string_view, std::string_view> LastTwoParts(std::string_view name) {
  const size_t dot = name.rfind('.');
  if (dot == std::string_view::npos) return {name, {}};
  const std::string_view head = name.substr(0, dot);
  const size_t dot2 = head.rfind('.');
  return {name.substr(dot + 1), dot2 == std::string_view::npos ? head : head.substr(dot2 + 1)};
}

bool HasPart(std::string_view name, std::string_view part) {
  for (const std::string_view p : SplitDots(name)) {
    if (p == part) return true;
  }
  return false;
}

bool IsDigits(std::string_view s) {
  if (s.empty()) return false;
  for (const char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

}  // namespace numprobe::detail
