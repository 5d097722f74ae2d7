// Helpers for msprobe's dotted names ("Functional.conv2d.0.forward.input.0"): splitting on dots
// the way Python's str.split('.') / rsplit('.', n) do.
#ifndef NUMPROBE_MSPROBE_ENTRY_NAME_H_
#define NUMPROBE_MSPROBE_ENTRY_NAME_H_

#include <string_view>
#include <utility>
#include <vector>

namespace numprobe::detail {

// name.split('.')
std::vector<std::string_view> SplitDots(std::string_view name);

// (parts[-1], parts[-2]) of name.split('.'); the second is empty when there is one part.
std::pair<std::string_view, std::string_view> LastTwoParts(std::string_view name);

// True when `part` is one of the dot-separated parts of `name`.
bool HasPart(std::string_view name, std::string_view part);

// True when `s` is non-empty and all ASCII digits (Python's str.isdigit for ASCII).
bool IsDigits(std::string_view s);

}  // namespace numprobe::detail

#endif  // NUMPROBE_MSPROBE_ENTRY_NAME_H_
