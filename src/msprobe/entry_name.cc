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
  // SplitDots' parts walked in place: the dump reader asks this of every array it flattens.
  size_t start = 0;
  while (true) {
    const size_t dot = name.find('.', start);
    const std::string_view p =
        name.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (p == part) return true;
    if (dot == std::string_view::npos) return false;
    start = dot + 1;
  }
}

EntryNameParts ParseEntryName(std::string_view entry) {
  EntryNameParts out;
  const auto [last, second] = LastTwoParts(entry);
  // The name without its last `n` parts (empty when it has no more than `n`).
  auto head = [entry](int n) {
    size_t end = entry.size();
    for (int k = 0; k < n; ++k) {
      end = entry.rfind('.', end - 1);
      if (end == std::string_view::npos || end == 0) return std::string_view();
    }
    return entry.substr(0, end);
  };
  if (last == "parameters_grad" || second == "parameters_grad") {
    out.direction = EntryDirection::kParametersGrad;
    out.op = head(1);
    return out;
  }
  if (last == "forward" || second == "forward") {
    out.direction = EntryDirection::kForward;
  } else if (last == "backward" || second == "backward") {
    out.direction = EntryDirection::kBackward;
  } else {
    return out;
  }
  out.op = head(2);
  const bool direction_last = last == "forward" || last == "backward";
  const std::string_view call = direction_last ? second : last;
  if (IsDigits(call)) out.call = call;
  if (direction_last && !out.call.empty()) {
    const auto parts = SplitDots(entry);
    if (parts.size() >= 4) {
      out.prefix = parts.front();
      const size_t api_begin = parts.front().size() + 1;
      out.api = entry.substr(api_begin, out.op.size() - api_begin);
    }
  }
  return out;
}

std::string_view EntryOfRow(std::string_view row_name) {
  auto is_direction = [](std::string_view s) { return s == "forward" || s == "backward"; };
  std::string_view parts[3];  // the two parts before the current one, and the current one
  size_t start = 0;
  for (size_t i = 0;; ++i) {
    const size_t dot = row_name.find('.', start);
    const std::string_view part = row_name.substr(
        start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    parts[0] = parts[1];
    parts[1] = parts[2];
    parts[2] = part;
    if (i >= 1) {
      if (part == "parameters_grad") return row_name.substr(0, start + part.size());
      if (part == "input" || part == "output" || part == "parameters" || part == "kwargs") {
        if (is_direction(parts[1]) || (i >= 2 && IsDigits(parts[1]) && is_direction(parts[0]))) {
          return row_name.substr(0, start - 1);
        }
      }
    }
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return row_name;
}

bool IsDigits(std::string_view s) {
  if (s.empty()) return false;
  for (const char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

}  // namespace numprobe::detail
