#include "numprobe/memory_limit.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <system_error>

#include <fmt/format.h>
#include <unistd.h>

namespace numprobe {

uint64_t DefaultMaxMemory() {
  constexpr uint64_t kGiB = uint64_t{1} << 30;
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_size = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return 16 * kGiB;
  const long double physical =
      static_cast<long double>(pages) * static_cast<long double>(page_size);
  return std::max(kGiB, static_cast<uint64_t>(physical / 2));
}

uint64_t EffectiveMaxMemory(uint64_t requested) {
  return requested != 0 ? requested : DefaultMaxMemory();
}

Result<uint64_t> ParseByteSize(std::string_view text) {
  const auto bad = [&] {
    return Status::InvalidArgument(fmt::format(
        "'{}' is not a size: a number of bytes with an optional K, M, G or T (e.g. 4G)", text));
  };
  // from_chars for double: locale-free, and rejects what strtod would half-accept.
  double number = 0;
  const char* const end = text.data() + text.size();
  const auto [rest, ec] = std::from_chars(text.data(), end, number);
  if (ec != std::errc() || !std::isfinite(number) || number <= 0) return bad();
  std::string suffix;
  for (const char* p = rest; p != end; ++p) {
    suffix += static_cast<char>(std::toupper(static_cast<unsigned char>(*p)));
  }
  int shift = 0;
  if (!suffix.empty()) {
    const std::string_view units = "KMGT";
    const size_t unit = units.find(suffix[0]);
    if (unit == std::string_view::npos) return bad();
    const std::string_view tail = std::string_view(suffix).substr(1);
    if (!tail.empty() && tail != "B" && tail != "IB") return bad();
    shift = 10 * static_cast<int>(unit + 1);
  } else if (number != std::floor(number)) {
    return bad();  // a fraction of a byte
  }
  const double bytes = std::ldexp(number, shift);
  if (bytes < 1 || bytes > std::ldexp(1.0, 63)) return bad();
  return static_cast<uint64_t>(bytes);
}

}  // namespace numprobe
